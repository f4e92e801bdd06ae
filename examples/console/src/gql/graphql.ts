/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type Gender =
  | 'GENDER_DIVERSE'
  | 'GENDER_FEMALE'
  | 'GENDER_MALE'
  | 'GENDER_UNSPECIFIED';

export type RegisterU2FInput = {
  /** Relying-party id (domain); defaults to the configured one. Must be the configured relying-party id or a subdomain of it that a configured origin can use. */
  domain?: string | null | undefined;
  userId: string | number;
};

export type SendEmailCodeInput = {
  /** Link template for the verification mail, e.g. https://app.example/verify?user={{.UserID}}&code={{.Code}}; a default is used when absent. */
  urlTemplate?: string | null | undefined;
};

/** At most one of sendCode, returnCode and isVerified may be given. */
export type SetEmailInput = {
  email: string;
  isVerified?: boolean | null | undefined;
  returnCode?: boolean | null | undefined;
  sendCode?: SendEmailCodeInput | null | undefined;
  userId: string | number;
};

export type TextMatch = {
  op?: TextMatchOperator | null | undefined;
  value: string;
};

/** How a text filter matches, case-insensitively (after Unicode NFKC folding), with no wildcards. */
export type TextMatchOperator =
  /** Anywhere in the value; slower than the other two. */
  | 'CONTAINS'
  /** The whole value. */
  | 'EXACT'
  /** The beginning of the value. */
  | 'PREFIX';

export type U2FTokenState =
  | 'U2F_STATE_NOT_READY'
  | 'U2F_STATE_READY';

export type UpdateMyProfileInput = {
  displayName: string;
  firstName: string;
  gender?: Gender | null | undefined;
  lastName: string;
  nickName?: string | null | undefined;
  preferredLanguage?: string | null | undefined;
};

/** Every given condition must hold. Text is compared case-insensitively. */
export type UserFilter = {
  /** Created at or after this time. */
  createdAfter?: string | null | undefined;
  /** Created before this time. */
  createdBefore?: string | null | undefined;
  displayNamePrefix?: string | null | undefined;
  email?: TextMatch | null | undefined;
  emailVerified?: boolean | null | undefined;
  firstNamePrefix?: string | null | undefined;
  lastNamePrefix?: string | null | undefined;
  state?: UserState | null | undefined;
  username?: TextMatch | null | undefined;
};

export type UserState =
  | 'USER_STATE_ACTIVE'
  | 'USER_STATE_INACTIVE'
  | 'USER_STATE_INITIAL'
  | 'USER_STATE_LOCKED';

export type VerifyEmailInput = {
  userId: string | number;
  verificationCode: string;
};

export type VerifyU2FRegistrationInput = {
  /** The PublicKeyCredential produced by the WebAuthn client (navigator.credentials.create), as JSON (55 to 1048576 characters). */
  publicKeyCredential: Record<string, unknown>;
  tokenName: string;
  u2fId: string | number;
  userId: string | number;
};

export type MeFieldsFragment = { id: string, username: string, profile: { firstName: string, lastName: string, displayName: string | null, nickName: string | null }, email: { email: string, isVerified: boolean }, phone: { phone: string, isVerified: boolean } | null, u2fTokens: Array<{ id: string, name: string | null, state: U2FTokenState }> } & { ' $fragmentName'?: 'MeFieldsFragment' };

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { me: { ' $fragmentRefs'?: { 'MeFieldsFragment': MeFieldsFragment } } };

export type UpdateMyProfileMutationVariables = Exact<{
  input: UpdateMyProfileInput;
}>;


export type UpdateMyProfileMutation = { updateMyProfile: { details: { sequence: string } } };

export type SetEmailMutationVariables = Exact<{
  input: SetEmailInput;
}>;


export type SetEmailMutation = { setEmail: { details: { sequence: string } } };

export type VerifyEmailMutationVariables = Exact<{
  input: VerifyEmailInput;
}>;


export type VerifyEmailMutation = { verifyEmail: { details: { sequence: string } } };

export type HistoryEventItemFragment = { type: string, createdAt: string, sequence: string, editorId: string, editor: { username: string } | null, changes: Array<{ field: string, value: string | null }> } & { ' $fragmentName'?: 'HistoryEventItemFragment' };

export type UserHistoryQueryVariables = Exact<{
  id: string | number;
  after?: string | null | undefined;
}>;


export type UserHistoryQuery = { user: { id: string, username: string, history: { totalCount: number, edges: Array<{ node: { ' $fragmentRefs'?: { 'HistoryEventItemFragment': HistoryEventItemFragment } } }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } } | null } | null };

export type UserRowFragment = { id: string, username: string, state: UserState, profile: { displayName: string | null }, email: { email: string, isVerified: boolean } } & { ' $fragmentName'?: 'UserRowFragment' };

export type SearchUsersQueryVariables = Exact<{
  filter?: UserFilter | null | undefined;
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
}>;


export type SearchUsersQuery = { users: { totalCount: number, edges: Array<{ node: { ' $fragmentRefs'?: { 'UserRowFragment': UserRowFragment } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } };

export type RegisterU2FMutationVariables = Exact<{
  input: RegisterU2FInput;
}>;


export type RegisterU2FMutation = { registerU2F: { u2fId: string, publicKeyCredentialCreationOptions: Record<string, unknown> } };

export type VerifyU2FRegistrationMutationVariables = Exact<{
  input: VerifyU2FRegistrationInput;
}>;


export type VerifyU2FRegistrationMutation = { verifyU2FRegistration: { details: { sequence: string } } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const MeFieldsFragmentDoc = new TypedDocumentString(`
    fragment MeFields on User {
  id
  username
  profile {
    firstName
    lastName
    displayName
    nickName
  }
  email {
    email
    isVerified
  }
  phone {
    phone
    isVerified
  }
  u2fTokens {
    id
    name
    state
  }
}
    `, {"fragmentName":"MeFields"}) as unknown as TypedDocumentString<MeFieldsFragment, unknown>;
export const HistoryEventItemFragmentDoc = new TypedDocumentString(`
    fragment HistoryEventItem on HistoryEvent {
  type
  createdAt
  sequence
  editorId
  editor {
    username
  }
  changes {
    field
    value
  }
}
    `, {"fragmentName":"HistoryEventItem"}) as unknown as TypedDocumentString<HistoryEventItemFragment, unknown>;
export const UserRowFragmentDoc = new TypedDocumentString(`
    fragment UserRow on User {
  id
  username
  state
  profile {
    displayName
  }
  email {
    email
    isVerified
  }
}
    `, {"fragmentName":"UserRow"}) as unknown as TypedDocumentString<UserRowFragment, unknown>;
export const MeDocument = new TypedDocumentString(`
    query Me {
  me {
    ...MeFields
  }
}
    fragment MeFields on User {
  id
  username
  profile {
    firstName
    lastName
    displayName
    nickName
  }
  email {
    email
    isVerified
  }
  phone {
    phone
    isVerified
  }
  u2fTokens {
    id
    name
    state
  }
}`, {"hash":"sha256:c68bbfc991fa10d56bb369852e940a8dff64e73486183dd5c4e0db86ec40e6c4"}) as unknown as TypedDocumentString<MeQuery, MeQueryVariables>;
export const UpdateMyProfileDocument = new TypedDocumentString(`
    mutation UpdateMyProfile($input: UpdateMyProfileInput!) {
  updateMyProfile(input: $input) {
    details {
      sequence
    }
  }
}
    `, {"hash":"sha256:f1bf99c384b8dd9dbc439474fd882a9c76e55ef7d7b878755a440ab16596a9b9"}) as unknown as TypedDocumentString<UpdateMyProfileMutation, UpdateMyProfileMutationVariables>;
export const SetEmailDocument = new TypedDocumentString(`
    mutation SetEmail($input: SetEmailInput!) {
  setEmail(input: $input) {
    details {
      sequence
    }
  }
}
    `, {"hash":"sha256:b52785a352689f0688b518543e2785cb4a42dbd0e72099a644712a2950cac251"}) as unknown as TypedDocumentString<SetEmailMutation, SetEmailMutationVariables>;
export const VerifyEmailDocument = new TypedDocumentString(`
    mutation VerifyEmail($input: VerifyEmailInput!) {
  verifyEmail(input: $input) {
    details {
      sequence
    }
  }
}
    `, {"hash":"sha256:141e5daafec0db8b5bba5758d20a508dfeacba158881b582953b49fd626ea992"}) as unknown as TypedDocumentString<VerifyEmailMutation, VerifyEmailMutationVariables>;
export const UserHistoryDocument = new TypedDocumentString(`
    query UserHistory($id: ID!, $after: String) {
  user(id: $id) {
    id
    username
    history(first: 20, after: $after) {
      totalCount
      edges {
        node {
          ...HistoryEventItem
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
    fragment HistoryEventItem on HistoryEvent {
  type
  createdAt
  sequence
  editorId
  editor {
    username
  }
  changes {
    field
    value
  }
}`, {"hash":"sha256:4f29411e0df11a419b9a4ca43909e1a3bd0093e36bd25361effa97f8db9371e1"}) as unknown as TypedDocumentString<UserHistoryQuery, UserHistoryQueryVariables>;
export const SearchUsersDocument = new TypedDocumentString(`
    query SearchUsers($filter: UserFilter, $first: Int, $after: String, $last: Int, $before: String) {
  users(
    filter: $filter
    first: $first
    after: $after
    last: $last
    before: $before
  ) {
    totalCount
    edges {
      node {
        ...UserRow
      }
    }
    pageInfo {
      hasNextPage
      hasPreviousPage
      startCursor
      endCursor
    }
  }
}
    fragment UserRow on User {
  id
  username
  state
  profile {
    displayName
  }
  email {
    email
    isVerified
  }
}`, {"hash":"sha256:82ffe81f29c6503ed4c68b2f5b34bd159730ea086fa2778814e0ac4761b72cec"}) as unknown as TypedDocumentString<SearchUsersQuery, SearchUsersQueryVariables>;
export const RegisterU2FDocument = new TypedDocumentString(`
    mutation RegisterU2F($input: RegisterU2FInput!) {
  registerU2F(input: $input) {
    u2fId
    publicKeyCredentialCreationOptions
  }
}
    `, {"hash":"sha256:8912403c673a9ede2de94bb281bb2141c0dfe18fcab0899b29a8ae966d1f0ddc"}) as unknown as TypedDocumentString<RegisterU2FMutation, RegisterU2FMutationVariables>;
export const VerifyU2FRegistrationDocument = new TypedDocumentString(`
    mutation VerifyU2FRegistration($input: VerifyU2FRegistrationInput!) {
  verifyU2FRegistration(input: $input) {
    details {
      sequence
    }
  }
}
    `, {"hash":"sha256:64828feda19c937d654995425ba9a59c9112c81ef90d2aba6df61a5f604269f5"}) as unknown as TypedDocumentString<VerifyU2FRegistrationMutation, VerifyU2FRegistrationMutationVariables>;