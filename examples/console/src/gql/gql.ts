/* eslint-disable */
import * as types from './graphql';



/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "\n  fragment MeFields on User {\n    id\n    username\n    profile {\n      firstName\n      lastName\n      displayName\n      nickName\n    }\n    email {\n      email\n      isVerified\n    }\n    phone {\n      phone\n      isVerified\n    }\n    u2fTokens {\n      id\n      name\n      state\n    }\n  }\n": typeof types.MeFieldsFragmentDoc,
    "\n  query Me {\n    me {\n      ...MeFields\n    }\n  }\n": typeof types.MeDocument,
    "\n  mutation UpdateMyProfile($input: UpdateMyProfileInput!) {\n    updateMyProfile(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": typeof types.UpdateMyProfileDocument,
    "\n  mutation SetEmail($input: SetEmailInput!) {\n    setEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": typeof types.SetEmailDocument,
    "\n  mutation VerifyEmail($input: VerifyEmailInput!) {\n    verifyEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": typeof types.VerifyEmailDocument,
    "\n  fragment HistoryEventItem on HistoryEvent {\n    type\n    createdAt\n    sequence\n    editorId\n    editor {\n      username\n    }\n    changes {\n      field\n      value\n    }\n  }\n": typeof types.HistoryEventItemFragmentDoc,
    "\n  query UserHistory($id: ID!, $after: String) {\n    user(id: $id) {\n      id\n      username\n      history(first: 20, after: $after) {\n        totalCount\n        edges {\n          node {\n            ...HistoryEventItem\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": typeof types.UserHistoryDocument,
    "\n  fragment UserRow on User {\n    id\n    username\n    state\n    profile {\n      displayName\n    }\n    email {\n      email\n      isVerified\n    }\n  }\n": typeof types.UserRowFragmentDoc,
    "\n  query SearchUsers($filter: UserFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    users(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges {\n        node {\n          ...UserRow\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": typeof types.SearchUsersDocument,
    "\n  mutation RegisterU2F($input: RegisterU2FInput!) {\n    registerU2F(input: $input) {\n      u2fId\n      publicKeyCredentialCreationOptions\n    }\n  }\n": typeof types.RegisterU2FDocument,
    "\n  mutation VerifyU2FRegistration($input: VerifyU2FRegistrationInput!) {\n    verifyU2FRegistration(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": typeof types.VerifyU2FRegistrationDocument,
};
const documents: Documents = {
    "\n  fragment MeFields on User {\n    id\n    username\n    profile {\n      firstName\n      lastName\n      displayName\n      nickName\n    }\n    email {\n      email\n      isVerified\n    }\n    phone {\n      phone\n      isVerified\n    }\n    u2fTokens {\n      id\n      name\n      state\n    }\n  }\n": types.MeFieldsFragmentDoc,
    "\n  query Me {\n    me {\n      ...MeFields\n    }\n  }\n": types.MeDocument,
    "\n  mutation UpdateMyProfile($input: UpdateMyProfileInput!) {\n    updateMyProfile(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": types.UpdateMyProfileDocument,
    "\n  mutation SetEmail($input: SetEmailInput!) {\n    setEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": types.SetEmailDocument,
    "\n  mutation VerifyEmail($input: VerifyEmailInput!) {\n    verifyEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": types.VerifyEmailDocument,
    "\n  fragment HistoryEventItem on HistoryEvent {\n    type\n    createdAt\n    sequence\n    editorId\n    editor {\n      username\n    }\n    changes {\n      field\n      value\n    }\n  }\n": types.HistoryEventItemFragmentDoc,
    "\n  query UserHistory($id: ID!, $after: String) {\n    user(id: $id) {\n      id\n      username\n      history(first: 20, after: $after) {\n        totalCount\n        edges {\n          node {\n            ...HistoryEventItem\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n": types.UserHistoryDocument,
    "\n  fragment UserRow on User {\n    id\n    username\n    state\n    profile {\n      displayName\n    }\n    email {\n      email\n      isVerified\n    }\n  }\n": types.UserRowFragmentDoc,
    "\n  query SearchUsers($filter: UserFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    users(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges {\n        node {\n          ...UserRow\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n": types.SearchUsersDocument,
    "\n  mutation RegisterU2F($input: RegisterU2FInput!) {\n    registerU2F(input: $input) {\n      u2fId\n      publicKeyCredentialCreationOptions\n    }\n  }\n": types.RegisterU2FDocument,
    "\n  mutation VerifyU2FRegistration($input: VerifyU2FRegistrationInput!) {\n    verifyU2FRegistration(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n": types.VerifyU2FRegistrationDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment MeFields on User {\n    id\n    username\n    profile {\n      firstName\n      lastName\n      displayName\n      nickName\n    }\n    email {\n      email\n      isVerified\n    }\n    phone {\n      phone\n      isVerified\n    }\n    u2fTokens {\n      id\n      name\n      state\n    }\n  }\n"): typeof import('./graphql').MeFieldsFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query Me {\n    me {\n      ...MeFields\n    }\n  }\n"): typeof import('./graphql').MeDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation UpdateMyProfile($input: UpdateMyProfileInput!) {\n    updateMyProfile(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n"): typeof import('./graphql').UpdateMyProfileDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation SetEmail($input: SetEmailInput!) {\n    setEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n"): typeof import('./graphql').SetEmailDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation VerifyEmail($input: VerifyEmailInput!) {\n    verifyEmail(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n"): typeof import('./graphql').VerifyEmailDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment HistoryEventItem on HistoryEvent {\n    type\n    createdAt\n    sequence\n    editorId\n    editor {\n      username\n    }\n    changes {\n      field\n      value\n    }\n  }\n"): typeof import('./graphql').HistoryEventItemFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query UserHistory($id: ID!, $after: String) {\n    user(id: $id) {\n      id\n      username\n      history(first: 20, after: $after) {\n        totalCount\n        edges {\n          node {\n            ...HistoryEventItem\n          }\n        }\n        pageInfo {\n          hasNextPage\n          endCursor\n        }\n      }\n    }\n  }\n"): typeof import('./graphql').UserHistoryDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  fragment UserRow on User {\n    id\n    username\n    state\n    profile {\n      displayName\n    }\n    email {\n      email\n      isVerified\n    }\n  }\n"): typeof import('./graphql').UserRowFragmentDoc;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  query SearchUsers($filter: UserFilter, $first: Int, $after: String, $last: Int, $before: String) {\n    users(filter: $filter, first: $first, after: $after, last: $last, before: $before) {\n      totalCount\n      edges {\n        node {\n          ...UserRow\n        }\n      }\n      pageInfo {\n        hasNextPage\n        hasPreviousPage\n        startCursor\n        endCursor\n      }\n    }\n  }\n"): typeof import('./graphql').SearchUsersDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation RegisterU2F($input: RegisterU2FInput!) {\n    registerU2F(input: $input) {\n      u2fId\n      publicKeyCredentialCreationOptions\n    }\n  }\n"): typeof import('./graphql').RegisterU2FDocument;
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "\n  mutation VerifyU2FRegistration($input: VerifyU2FRegistrationInput!) {\n    verifyU2FRegistration(input: $input) {\n      details {\n        sequence\n      }\n    }\n  }\n"): typeof import('./graphql').VerifyU2FRegistrationDocument;


export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}
