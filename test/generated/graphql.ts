/* eslint-disable */
/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';
/** password and hashedPassword are mutually exclusive. */
export type AddHumanUserInput = {
  email: EmailInput;
  hashedPassword?: HashedPasswordInput | null | undefined;
  idpLinks?: Array<IDPLinkInput> | null | undefined;
  metadata?: Array<MetadataInput> | null | undefined;
  organisation?: OrganisationInput | null | undefined;
  password?: PasswordInput | null | undefined;
  phone?: PhoneInput | null | undefined;
  profile: ProfileInput;
  userId?: string | number | null | undefined;
  username?: string | null | undefined;
};

export type AddOIDCIdentityProviderInput = {
  clientId: string;
  /** Stored encrypted; never readable afterwards (see IdentityProvider.hasClientSecret). */
  clientSecret: string;
  displayNameMapping?: OIDCMappingField | null | undefined;
  issuer: string;
  name: string;
  scopes?: Array<string> | null | undefined;
  usernameMapping?: OIDCMappingField | null | undefined;
};

export type AddOrgMemberInput = {
  /** ORG_OWNER, ORG_USER_MANAGER, ORG_PROJECT_CREATOR, ... (the README lists the roles and their permissions). */
  roles: Array<string>;
  userId: string | number;
};

export type AddOrganizationInput = {
  name: string;
};

/** Project names are unique in their organization, ignoring case. */
export type AddProjectInput = {
  name: string;
};

/** Exactly one of metadataXml and metadataUrl. The name is unique in its project ignoring case; the entityID of the metadata is unique in the instance. */
export type AddSAMLAppInput = {
  /** An http(s) URL the metadata document is fetched from, once, when the app is created. */
  metadataUrl?: string | null | undefined;
  /** A SAML 2.0 metadata document whose root is an md:EntityDescriptor (no DOCTYPE). */
  metadataXml?: string | null | undefined;
  name: string;
  projectId: string | number;
};

/** At most one of sendCode, returnCode and isVerified may be given. */
export type EmailInput = {
  email: string;
  isVerified?: boolean | null | undefined;
  returnCode?: boolean | null | undefined;
  sendCode?: SendEmailCodeInput | null | undefined;
};

export type Gender =
  | 'GENDER_DIVERSE'
  | 'GENDER_FEMALE'
  | 'GENDER_MALE'
  | 'GENDER_UNSPECIFIED';

export type HashedPasswordInput = {
  changeRequired?: boolean | null | undefined;
  hash: string;
};

export type IDPLinkInput = {
  idpId: string | number;
  userId: string;
  userName: string;
};

export type MetadataInput = {
  key: string;
  value: string;
};

export type OIDCMappingField =
  | 'OIDC_MAPPING_FIELD_EMAIL'
  | 'OIDC_MAPPING_FIELD_PREFERRED_USERNAME'
  | 'OIDC_MAPPING_FIELD_UNSPECIFIED';

export type OrderDirection =
  | 'ASC'
  | 'DESC';

export type OrganisationInput = {
  orgDomain?: string | null | undefined;
  orgId?: string | number | null | undefined;
};

export type PasswordInput = {
  changeRequired?: boolean | null | undefined;
  password: string;
};

/** At most one of sendCode, returnCode and isVerified may be given. */
export type PhoneInput = {
  isVerified?: boolean | null | undefined;
  phone?: string | null | undefined;
  returnCode?: boolean | null | undefined;
  sendCode?: boolean | null | undefined;
};

export type ProfileInput = {
  displayName?: string | null | undefined;
  firstName: string;
  gender?: Gender | null | undefined;
  lastName: string;
  nickName?: string | null | undefined;
  preferredLanguage?: string | null | undefined;
};

export type RegisterU2FInput = {
  /** Relying-party id (domain); defaults to the configured one. Must be the configured relying-party id or a subdomain of it that a configured origin can use. */
  domain?: string | null | undefined;
  userId: string | number;
};

export type ResendEmailCodeInput = {
  /** Link template for the mail, with {{.UserID}}, {{.Code}} and {{.OrgID}}; the configured default when absent. */
  urlTemplate?: string | null | undefined;
  userId: string | number;
};

export type ResendPhoneCodeInput = {
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

export type SetHumanPasswordInput = {
  noChangeRequired?: boolean | null | undefined;
  password: string;
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

export type UpdateHumanPhoneInput = {
  isPhoneVerified?: boolean | null | undefined;
  /** Global number as in RFC 3966, e.g. +41791234567. */
  phone: string;
  userId: string | number;
};

export type UpdateHumanProfileInput = {
  displayName?: string | null | undefined;
  firstName: string;
  gender?: Gender | null | undefined;
  lastName: string;
  nickName?: string | null | undefined;
  preferredLanguage?: string | null | undefined;
  userId: string | number;
};

export type UpdateMyProfileInput = {
  displayName: string;
  firstName: string;
  gender?: Gender | null | undefined;
  lastName: string;
  nickName?: string | null | undefined;
  preferredLanguage?: string | null | undefined;
};

/** The whole OIDC configuration: scopes or mappings left out are empty / OIDC_MAPPING_FIELD_UNSPECIFIED afterwards. */
export type UpdateOIDCIdentityProviderInput = {
  clientId: string;
  /** Empty or absent: the stored secret is kept. */
  clientSecret?: string | null | undefined;
  displayNameMapping?: OIDCMappingField | null | undefined;
  idpId: string | number;
  issuer: string;
  scopes?: Array<string> | null | undefined;
  usernameMapping?: OIDCMappingField | null | undefined;
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

/** Users with the same value are ordered by id, in the same direction. */
export type UserOrder = {
  direction?: OrderDirection | null | undefined;
  field?: UserOrderField | null | undefined;
};

export type UserOrderField =
  | 'CHANGE_DATE'
  | 'CREATION_DATE'
  | 'USERNAME';

export type UserState =
  | 'USER_STATE_ACTIVE'
  | 'USER_STATE_INACTIVE'
  | 'USER_STATE_INITIAL'
  | 'USER_STATE_LOCKED';

export type VerifyEmailInput = {
  userId: string | number;
  verificationCode: string;
};

export type VerifyPhoneInput = {
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

export type AddOIDCIdentityProviderMutationVariables = Exact<{
  input: AddOIDCIdentityProviderInput;
}>;


export type AddOIDCIdentityProviderMutation = { addOIDCIdentityProvider: { idpId: string, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type UpdateOIDCIdentityProviderMutationVariables = Exact<{
  input: UpdateOIDCIdentityProviderInput;
}>;


export type UpdateOIDCIdentityProviderMutation = { updateOIDCIdentityProvider: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type IdentityProviderQueryVariables = Exact<{
  id: string | number;
}>;


export type IdentityProviderQuery = { identityProvider: { id: string, name: string, resourceOwner: string, issuer: string, clientId: string, hasClientSecret: boolean, scopes: Array<string>, displayNameMapping: OIDCMappingField, usernameMapping: OIDCMappingField, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } | null };

export type MutationDeprecationsQueryVariables = Exact<{ [key: string]: never; }>;


export type MutationDeprecationsQuery = { __type: { fields: Array<{ name: string, isDeprecated: boolean, deprecationReason: string | null }> | null } | null };

export type AddOrganizationMutationVariables = Exact<{
  input: AddOrganizationInput;
}>;


export type AddOrganizationMutation = { addOrganization: { orgId: string, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type AddOrgMemberMutationVariables = Exact<{
  input: AddOrgMemberInput;
}>;


export type AddOrgMemberMutation = { addOrgMember: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type AddProjectMutationVariables = Exact<{
  input: AddProjectInput;
}>;


export type AddProjectMutation = { addProject: { projectId: string, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type AddSAMLAppMutationVariables = Exact<{
  input: AddSAMLAppInput;
}>;


export type AddSAMLAppMutation = { addSAMLApp: { appId: string, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type ProjectQueryVariables = Exact<{
  id: string | number;
}>;


export type ProjectQuery = { project: { id: string, name: string, resourceOwner: string, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string }, samlApps: Array<{ id: string, name: string, entityId: string, metadataUrl: string | null, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } }> } | null };

export type ResendEmailCodeMutationVariables = Exact<{
  input: ResendEmailCodeInput;
}>;


export type ResendEmailCodeMutation = { resendEmailCode: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type ResendPhoneCodeMutationVariables = Exact<{
  input: ResendPhoneCodeInput;
}>;


export type ResendPhoneCodeMutation = { resendPhoneCode: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type RegisterU2FMutationVariables = Exact<{
  input: RegisterU2FInput;
}>;


export type RegisterU2FMutation = { registerU2F: { u2fId: string, publicKeyCredentialCreationOptions: Record<string, unknown>, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type VerifyU2FRegistrationMutationVariables = Exact<{
  input: VerifyU2FRegistrationInput;
}>;


export type VerifyU2FRegistrationMutation = { verifyU2FRegistration: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type UserU2FTokensQueryVariables = Exact<{
  id: string | number;
}>;


export type UserU2FTokensQuery = { user: { id: string, u2fTokens: Array<{ id: string, name: string | null, state: U2FTokenState }> } | null };

export type UsersQueryVariables = Exact<{
  first?: number | null | undefined;
  after?: string | null | undefined;
  last?: number | null | undefined;
  before?: string | null | undefined;
  filter?: UserFilter | null | undefined;
  orderBy?: UserOrder | null | undefined;
  allOrganizations?: boolean | null | undefined;
  withCount?: boolean | null | undefined;
}>;


export type UsersQuery = { users: { totalCount?: number, edges: Array<{ cursor: string, node: { id: string, username: string, resourceOwner: string, state: UserState, email: { email: string, isVerified: boolean }, profile: { firstName: string, lastName: string, displayName: string | null }, details: { creationDate: string | null, changeDate: string } } }>, pageInfo: { hasNextPage: boolean, hasPreviousPage: boolean, startCursor: string | null, endCursor: string | null } } };

export type DetailsFieldsFragment = { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string };

export type UpdateMyProfileMutationVariables = Exact<{
  input: UpdateMyProfileInput;
}>;


export type UpdateMyProfileMutation = { updateMyProfile: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type UpdateHumanProfileMutationVariables = Exact<{
  input: UpdateHumanProfileInput;
}>;


export type UpdateHumanProfileMutation = { updateHumanProfile: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type AddHumanUserMutationVariables = Exact<{
  input: AddHumanUserInput;
}>;


export type AddHumanUserMutation = { addHumanUser: { userId: string, emailCode: string | null, phoneCode: string | null, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type SetEmailMutationVariables = Exact<{
  input: SetEmailInput;
}>;


export type SetEmailMutation = { setEmail: { verificationCode: string | null, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type UpdateHumanPhoneMutationVariables = Exact<{
  input: UpdateHumanPhoneInput;
}>;


export type UpdateHumanPhoneMutation = { updateHumanPhone: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type SetHumanPasswordMutationVariables = Exact<{
  input: SetHumanPasswordInput;
}>;


export type SetHumanPasswordMutation = { setHumanPassword: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type VerifyEmailMutationVariables = Exact<{
  input: VerifyEmailInput;
}>;


export type VerifyEmailMutation = { verifyEmail: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type VerifyPhoneMutationVariables = Exact<{
  input: VerifyPhoneInput;
}>;


export type VerifyPhoneMutation = { verifyPhone: { details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string } } };

export type UserFieldsFragment = { id: string, username: string, state: UserState, resourceOwner: string, passwordChangeRequired: boolean, hasPassword: boolean, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string }, profile: { firstName: string, lastName: string, nickName: string | null, displayName: string | null, preferredLanguage: string | null, gender: Gender }, email: { email: string, isVerified: boolean }, phone: { phone: string, isVerified: boolean } | null, metadata: Array<{ key: string, value: string }>, idpLinks: Array<{ idpId: string, userId: string, userName: string }>, u2fTokens: Array<{ id: string, name: string | null, state: U2FTokenState }> };

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { me: { id: string, username: string, state: UserState, resourceOwner: string, passwordChangeRequired: boolean, hasPassword: boolean, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string }, profile: { firstName: string, lastName: string, nickName: string | null, displayName: string | null, preferredLanguage: string | null, gender: Gender }, email: { email: string, isVerified: boolean }, phone: { phone: string, isVerified: boolean } | null, metadata: Array<{ key: string, value: string }>, idpLinks: Array<{ idpId: string, userId: string, userName: string }>, u2fTokens: Array<{ id: string, name: string | null, state: U2FTokenState }> } };

export type UserQueryVariables = Exact<{
  id: string | number;
}>;


export type UserQuery = { user: { id: string, username: string, state: UserState, resourceOwner: string, passwordChangeRequired: boolean, hasPassword: boolean, details: { sequence: string, creationDate: string | null, changeDate: string, resourceOwner: string }, profile: { firstName: string, lastName: string, nickName: string | null, displayName: string | null, preferredLanguage: string | null, gender: Gender }, email: { email: string, isVerified: boolean }, phone: { phone: string, isVerified: boolean } | null, metadata: Array<{ key: string, value: string }>, idpLinks: Array<{ idpId: string, userId: string, userName: string }>, u2fTokens: Array<{ id: string, name: string | null, state: U2FTokenState }> } | null };

export const DetailsFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<DetailsFieldsFragment, unknown>;
export const UserFieldsFragmentDoc = {"kind":"Document","definitions":[{"kind":"FragmentDefinition","name":{"kind":"Name","value":"UserFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"User"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"profile"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"firstName"}},{"kind":"Field","name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"nickName"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"preferredLanguage"}},{"kind":"Field","name":{"kind":"Name","value":"gender"}}]}},{"kind":"Field","name":{"kind":"Name","value":"email"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"phone"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"passwordChangeRequired"}},{"kind":"Field","name":{"kind":"Name","value":"hasPassword"}},{"kind":"Field","name":{"kind":"Name","value":"metadata"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}},{"kind":"Field","name":{"kind":"Name","value":"idpLinks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"idpId"}},{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"userName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"u2fTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<UserFieldsFragment, unknown>;
export const AddOIDCIdentityProviderDocument = {"__meta__":{"hash":"sha256:10cef05c1e085eeab0635664fb65785f1308d7fcbe169fe680b0164fa637ed10"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddOIDCIdentityProvider"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddOIDCIdentityProviderInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addOIDCIdentityProvider"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"idpId"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<AddOIDCIdentityProviderMutation, AddOIDCIdentityProviderMutationVariables>;
export const UpdateOIDCIdentityProviderDocument = {"__meta__":{"hash":"sha256:18371ad79f294e081c51e02ec493a3d3b635c0c3aee3524b841f0d4cebca18ba"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateOIDCIdentityProvider"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateOIDCIdentityProviderInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateOIDCIdentityProvider"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<UpdateOIDCIdentityProviderMutation, UpdateOIDCIdentityProviderMutationVariables>;
export const IdentityProviderDocument = {"__meta__":{"hash":"sha256:f97efcef26ec8159739c093c965e516ff8aae3831708d7a41af07d7a4dd33683"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"IdentityProvider"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"identityProvider"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}},{"kind":"Field","name":{"kind":"Name","value":"issuer"}},{"kind":"Field","name":{"kind":"Name","value":"clientId"}},{"kind":"Field","name":{"kind":"Name","value":"hasClientSecret"}},{"kind":"Field","name":{"kind":"Name","value":"scopes"}},{"kind":"Field","name":{"kind":"Name","value":"displayNameMapping"}},{"kind":"Field","name":{"kind":"Name","value":"usernameMapping"}}]}}]}}]} as unknown as DocumentNode<IdentityProviderQuery, IdentityProviderQueryVariables>;
export const MutationDeprecationsDocument = {"__meta__":{"hash":"sha256:a2c1c56aee27d1d5b7b111c7269c43f750229d76353a3419ba1f2af5aa1df4b1"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"MutationDeprecations"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"__type"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"name"},"value":{"kind":"StringValue","value":"Mutation","block":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"fields"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"includeDeprecated"},"value":{"kind":"BooleanValue","value":true}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"isDeprecated"}},{"kind":"Field","name":{"kind":"Name","value":"deprecationReason"}}]}}]}}]}}]} as unknown as DocumentNode<MutationDeprecationsQuery, MutationDeprecationsQueryVariables>;
export const AddOrganizationDocument = {"__meta__":{"hash":"sha256:8907faced6d856155e88e72ec9c3456aab3c43885e01b53cbebaa7140d997bda"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddOrganization"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddOrganizationInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addOrganization"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"orgId"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<AddOrganizationMutation, AddOrganizationMutationVariables>;
export const AddOrgMemberDocument = {"__meta__":{"hash":"sha256:4172997fb4259205051424f37c616671bcab2335abff3f517ed063fa4bd77c2e"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddOrgMember"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddOrgMemberInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addOrgMember"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<AddOrgMemberMutation, AddOrgMemberMutationVariables>;
export const AddProjectDocument = {"__meta__":{"hash":"sha256:8c688841ce2da98efedc9bb0e07a40f082fb7a078ea42dce4887fdbbc9018559"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddProject"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddProjectInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addProject"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"projectId"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<AddProjectMutation, AddProjectMutationVariables>;
export const AddSAMLAppDocument = {"__meta__":{"hash":"sha256:65065854e2daa590bf8d72428764f675e0c82508f71fa4045f8b6ce79a1c3a19"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddSAMLApp"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddSAMLAppInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addSAMLApp"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"appId"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<AddSAMLAppMutation, AddSAMLAppMutationVariables>;
export const ProjectDocument = {"__meta__":{"hash":"sha256:a077008dcadc068f6da70d61a4e4754db2f88b97c982436db8d835f59513a21f"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Project"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"project"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}},{"kind":"Field","name":{"kind":"Name","value":"samlApps"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"entityId"}},{"kind":"Field","name":{"kind":"Name","value":"metadataUrl"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]}}]} as unknown as DocumentNode<ProjectQuery, ProjectQueryVariables>;
export const ResendEmailCodeDocument = {"__meta__":{"hash":"sha256:ae7eee30a76b8e36a97efec19b127d964e8d149d67a5d583cb39da1f04afe246"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ResendEmailCode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResendEmailCodeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resendEmailCode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<ResendEmailCodeMutation, ResendEmailCodeMutationVariables>;
export const ResendPhoneCodeDocument = {"__meta__":{"hash":"sha256:84a64db482dffa88d734d54762ad0d21d8aef647d99ca14c5802369d0bf593b7"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"ResendPhoneCode"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ResendPhoneCodeInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"resendPhoneCode"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<ResendPhoneCodeMutation, ResendPhoneCodeMutationVariables>;
export const RegisterU2FDocument = {"__meta__":{"hash":"sha256:a7d29662f2600270186249a24332e2e6def1507e0a51a525cc8013bd76d7e129"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"RegisterU2F"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"RegisterU2FInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"registerU2F"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"u2fId"}},{"kind":"Field","name":{"kind":"Name","value":"publicKeyCredentialCreationOptions"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<RegisterU2FMutation, RegisterU2FMutationVariables>;
export const VerifyU2FRegistrationDocument = {"__meta__":{"hash":"sha256:bd0fa3dde0f97d481b35cff9b7874ca5c7cad1c25a2cacf77f45cffe78b4e69b"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"VerifyU2FRegistration"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"VerifyU2FRegistrationInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"verifyU2FRegistration"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]}}]}}]} as unknown as DocumentNode<VerifyU2FRegistrationMutation, VerifyU2FRegistrationMutationVariables>;
export const UserU2FTokensDocument = {"__meta__":{"hash":"sha256:dc7eaae492eb57664cb8d8221986d0edf22a1244ac49ec17d0a16cd81df8cdf6"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"UserU2FTokens"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"user"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"u2fTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]}}]} as unknown as DocumentNode<UserU2FTokensQuery, UserU2FTokensQueryVariables>;
export const UsersDocument = {"__meta__":{"hash":"sha256:14a80745370e48147dc822646597b57931a4957a8225c2d02690b684dfb06551"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Users"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"first"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"after"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"last"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Int"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"before"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"String"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"filter"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"UserFilter"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"orderBy"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"UserOrder"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"allOrganizations"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}}},{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"withCount"}},"type":{"kind":"NamedType","name":{"kind":"Name","value":"Boolean"}},"defaultValue":{"kind":"BooleanValue","value":false}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"users"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"first"},"value":{"kind":"Variable","name":{"kind":"Name","value":"first"}}},{"kind":"Argument","name":{"kind":"Name","value":"after"},"value":{"kind":"Variable","name":{"kind":"Name","value":"after"}}},{"kind":"Argument","name":{"kind":"Name","value":"last"},"value":{"kind":"Variable","name":{"kind":"Name","value":"last"}}},{"kind":"Argument","name":{"kind":"Name","value":"before"},"value":{"kind":"Variable","name":{"kind":"Name","value":"before"}}},{"kind":"Argument","name":{"kind":"Name","value":"filter"},"value":{"kind":"Variable","name":{"kind":"Name","value":"filter"}}},{"kind":"Argument","name":{"kind":"Name","value":"orderBy"},"value":{"kind":"Variable","name":{"kind":"Name","value":"orderBy"}}},{"kind":"Argument","name":{"kind":"Name","value":"allOrganizations"},"value":{"kind":"Variable","name":{"kind":"Name","value":"allOrganizations"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"totalCount"},"directives":[{"kind":"Directive","name":{"kind":"Name","value":"include"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"if"},"value":{"kind":"Variable","name":{"kind":"Name","value":"withCount"}}}]}]},{"kind":"Field","name":{"kind":"Name","value":"edges"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"cursor"}},{"kind":"Field","name":{"kind":"Name","value":"node"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"email"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"profile"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"firstName"}},{"kind":"Field","name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}}]}}]}}]}},{"kind":"Field","name":{"kind":"Name","value":"pageInfo"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"hasNextPage"}},{"kind":"Field","name":{"kind":"Name","value":"hasPreviousPage"}},{"kind":"Field","name":{"kind":"Name","value":"startCursor"}},{"kind":"Field","name":{"kind":"Name","value":"endCursor"}}]}}]}}]}}]} as unknown as DocumentNode<UsersQuery, UsersQueryVariables>;
export const UpdateMyProfileDocument = {"__meta__":{"hash":"sha256:eddbc0d3d3471846d6eb87ac15b13504007e3728119d6bed68c5c6d85b0a2963"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateMyProfile"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateMyProfileInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateMyProfile"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<UpdateMyProfileMutation, UpdateMyProfileMutationVariables>;
export const UpdateHumanProfileDocument = {"__meta__":{"hash":"sha256:486cc8252b8f543547f6b98331d7a441f386472451755cdfa5b5078e1626adab"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateHumanProfile"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateHumanProfileInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateHumanProfile"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<UpdateHumanProfileMutation, UpdateHumanProfileMutationVariables>;
export const AddHumanUserDocument = {"__meta__":{"hash":"sha256:8b5ac0989d8189b93ef585a7516c70efc33282868cdeac81e09170f34fb343e1"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"AddHumanUser"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"AddHumanUserInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"addHumanUser"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"emailCode"}},{"kind":"Field","name":{"kind":"Name","value":"phoneCode"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<AddHumanUserMutation, AddHumanUserMutationVariables>;
export const SetEmailDocument = {"__meta__":{"hash":"sha256:f894581377f130d0c64a6c4e7380f12e4ee57488eaadbd12d6962b59a7d4ee53"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetEmail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SetEmailInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setEmail"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"verificationCode"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<SetEmailMutation, SetEmailMutationVariables>;
export const UpdateHumanPhoneDocument = {"__meta__":{"hash":"sha256:80667c72f6a88699bbe68c9ef396e9cbf7d01393a2dc85af32ef3e89edbf7842"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"UpdateHumanPhone"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"UpdateHumanPhoneInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"updateHumanPhone"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<UpdateHumanPhoneMutation, UpdateHumanPhoneMutationVariables>;
export const SetHumanPasswordDocument = {"__meta__":{"hash":"sha256:1692e93f5e85fbfc7edc8fbf582a0cd43725f4282e9593a288a919bfa33d000b"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"SetHumanPassword"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"SetHumanPasswordInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"setHumanPassword"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<SetHumanPasswordMutation, SetHumanPasswordMutationVariables>;
export const VerifyEmailDocument = {"__meta__":{"hash":"sha256:b5a1e3aca598e2b30a14441948b4f6520ea1afce140cca8d916b1571c22b4955"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"VerifyEmail"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"VerifyEmailInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"verifyEmail"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<VerifyEmailMutation, VerifyEmailMutationVariables>;
export const VerifyPhoneDocument = {"__meta__":{"hash":"sha256:1b9e554f161bd8f13a1fd31d180219d4d52967bef995d460662d1724265a320b"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"mutation","name":{"kind":"Name","value":"VerifyPhone"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"input"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"VerifyPhoneInput"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"verifyPhone"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"input"},"value":{"kind":"Variable","name":{"kind":"Name","value":"input"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}}]} as unknown as DocumentNode<VerifyPhoneMutation, VerifyPhoneMutationVariables>;
export const MeDocument = {"__meta__":{"hash":"sha256:bff129be5e122a746f499794b999bbfaf60d1a3d47a423f33566b078b67056e8"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"Me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"me"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"UserFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"UserFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"User"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"profile"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"firstName"}},{"kind":"Field","name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"nickName"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"preferredLanguage"}},{"kind":"Field","name":{"kind":"Name","value":"gender"}}]}},{"kind":"Field","name":{"kind":"Name","value":"email"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"phone"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"passwordChangeRequired"}},{"kind":"Field","name":{"kind":"Name","value":"hasPassword"}},{"kind":"Field","name":{"kind":"Name","value":"metadata"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}},{"kind":"Field","name":{"kind":"Name","value":"idpLinks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"idpId"}},{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"userName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"u2fTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]} as unknown as DocumentNode<MeQuery, MeQueryVariables>;
export const UserDocument = {"__meta__":{"hash":"sha256:a6c4ee14a495f68372f670006d3bfbf538a7a049431ce5fe7a6cc3959e5013e9"},"kind":"Document","definitions":[{"kind":"OperationDefinition","operation":"query","name":{"kind":"Name","value":"User"},"variableDefinitions":[{"kind":"VariableDefinition","variable":{"kind":"Variable","name":{"kind":"Name","value":"id"}},"type":{"kind":"NonNullType","type":{"kind":"NamedType","name":{"kind":"Name","value":"ID"}}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"user"},"arguments":[{"kind":"Argument","name":{"kind":"Name","value":"id"},"value":{"kind":"Variable","name":{"kind":"Name","value":"id"}}}],"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"UserFields"}}]}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"DetailsFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"Details"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"sequence"}},{"kind":"Field","name":{"kind":"Name","value":"creationDate"}},{"kind":"Field","name":{"kind":"Name","value":"changeDate"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}}]}},{"kind":"FragmentDefinition","name":{"kind":"Name","value":"UserFields"},"typeCondition":{"kind":"NamedType","name":{"kind":"Name","value":"User"}},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"username"}},{"kind":"Field","name":{"kind":"Name","value":"state"}},{"kind":"Field","name":{"kind":"Name","value":"resourceOwner"}},{"kind":"Field","name":{"kind":"Name","value":"details"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"FragmentSpread","name":{"kind":"Name","value":"DetailsFields"}}]}},{"kind":"Field","name":{"kind":"Name","value":"profile"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"firstName"}},{"kind":"Field","name":{"kind":"Name","value":"lastName"}},{"kind":"Field","name":{"kind":"Name","value":"nickName"}},{"kind":"Field","name":{"kind":"Name","value":"displayName"}},{"kind":"Field","name":{"kind":"Name","value":"preferredLanguage"}},{"kind":"Field","name":{"kind":"Name","value":"gender"}}]}},{"kind":"Field","name":{"kind":"Name","value":"email"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"email"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"phone"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"phone"}},{"kind":"Field","name":{"kind":"Name","value":"isVerified"}}]}},{"kind":"Field","name":{"kind":"Name","value":"passwordChangeRequired"}},{"kind":"Field","name":{"kind":"Name","value":"hasPassword"}},{"kind":"Field","name":{"kind":"Name","value":"metadata"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"key"}},{"kind":"Field","name":{"kind":"Name","value":"value"}}]}},{"kind":"Field","name":{"kind":"Name","value":"idpLinks"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"idpId"}},{"kind":"Field","name":{"kind":"Name","value":"userId"}},{"kind":"Field","name":{"kind":"Name","value":"userName"}}]}},{"kind":"Field","name":{"kind":"Name","value":"u2fTokens"},"selectionSet":{"kind":"SelectionSet","selections":[{"kind":"Field","name":{"kind":"Name","value":"id"}},{"kind":"Field","name":{"kind":"Name","value":"name"}},{"kind":"Field","name":{"kind":"Name","value":"state"}}]}}]}}]} as unknown as DocumentNode<UserQuery, UserQueryVariables>;