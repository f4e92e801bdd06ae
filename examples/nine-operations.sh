#!/usr/bin/env bash
# The nine operations of the identity API over REST/JSON with curl, at the paths and verbs of the
# descriptors' google.api.http rules (as grpc-gateway serves them for ZITADEL); each is followed
# by a read-back where the API has one. The same run as examples/nine-operations.mjs.
#
#   GATEWAY=http://127.0.0.1:4000 TOKEN='<the printed token>' bash examples/nine-operations.sh
#
# ORIGIN: the origin the software authenticator (examples/soft-authenticator.mjs, run with node)
# reports for the U2F registration; one of the gateway's WEBAUTHN_ORIGINS (default
# http://localhost:4000 on both sides). The token's user needs the rights of an instance
# administrator: the run adds an organization and works inside it with x-zitadel-orgid.
# Needs bash, curl and node (for JSON). One JSON line per operation ({op, sequence, ...}), then
# one summary line; a failed call or a read-back that disagrees ends the run with exit code 1.
set -euo pipefail

GATEWAY="${GATEWAY:-http://127.0.0.1:4000}"
GATEWAY="${GATEWAY%/}"
: "${TOKEN:?TOKEN is not set}"
export ORIGIN="${ORIGIN:-http://localhost:4000}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN="$(date +%s)$RANDOM"
ORG_ID=""
CURRENT=""

# call VERB PATH [BODY]: the JSON answer on stdout; on a status other than 2xx, the error body on
# stderr and exit 1.
call() {
  local verb="$1" path="$2" body="${3:-}" out status
  local args=(-sS -X "$verb" -H "Authorization: Bearer $TOKEN" -w '\n%{http_code}')
  if [ -n "$ORG_ID" ]; then args+=(-H "x-zitadel-orgid: $ORG_ID"); fi
  if [ -n "$body" ]; then args+=(-H 'Content-Type: application/json' --data-binary "$body"); fi
  out="$(curl "${args[@]}" "$GATEWAY$path")"
  status="${out##*$'\n'}"
  out="${out%$'\n'*}"
  if [ "${status:0:1}" != 2 ]; then
    printf '%s: %s %s answered %s: %s\n' "$CURRENT" "$verb" "$path" "$status" "$out" >&2
    exit 1
  fi
  printf '%s' "$out"
}

# get JSON FIELD...: each field (a dotted path) of the JSON document on its own line; objects
# and arrays as JSON, a missing field as an empty line.
get() {
  node -e '
    let v0 = JSON.parse(process.argv[1]);
    for (const path of process.argv.slice(2)) {
      let v = v0;
      for (const k of path.split(".")) v = v?.[k];
      console.log(v === undefined || v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
    }' "$@"
}

# same WHAT ACTUAL EXPECTED: stop the run when a read-back disagrees.
same() {
  if [ "$2" != "$3" ]; then
    printf '%s: read back %s %s, expected %s\n' "$CURRENT" "$1" "$2" "$3" >&2
    exit 1
  fi
}

# line KEY=STRING... KEY:=JSON...: one JSON line.
line() {
  node -e '
    const o = {};
    for (const kv of process.argv.slice(1)) {
      const i = kv.indexOf("="), raw = kv[i - 1] === ":", k = kv.slice(0, raw ? i - 1 : i), v = kv.slice(i + 1);
      o[k] = raw ? JSON.parse(v) : v;
    }
    console.log(JSON.stringify(o));' "$@"
}

# A minimal SAML 2.0 SP EntityDescriptor, base64 as proto3 JSON writes bytes.
sp_metadata() {
  cat <<XML | base64 | tr -d '\n'
<?xml version="1.0" encoding="UTF-8"?>
<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp-$RUN.example.com/saml/metadata">
  <md:SPSSODescriptor protocolSupportEnumeration="urn:oasis:names:tc:SAML:2.0:protocol">
    <md:NameIDFormat>urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress</md:NameIDFormat>
    <md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST" Location="https://sp-$RUN.example.com/saml/acs" index="0" isDefault="true"/>
  </md:SPSSODescriptor>
</md:EntityDescriptor>
XML
}

# A fresh organization for this run; every later call names it in x-zitadel-orgid.
CURRENT=AddOrganization
res="$(call POST /v2/organizations "{\"name\":\"Nine operations $RUN\"}")"
{ read -r ORG_ID; } < <(get "$res" organizationId)

# 1. UpdateMyProfile: PUT /auth/v1/users/me/profile, read back with GET /auth/v1/users/me
# (the caller's own user: no organization header).
CURRENT=UpdateMyProfile
MY_NAME="Admin $RUN"
res="$(ORG_ID='' call PUT /auth/v1/users/me/profile "{\"firstName\":\"Grace\",\"lastName\":\"Hopper\",\"displayName\":\"$MY_NAME\",\"gender\":\"GENDER_FEMALE\"}")"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(ORG_ID='' call GET /auth/v1/users/me)"
{ read -r me_id; read -r me_sequence; read -r me_name; } < <(get "$res" user.id user.details.sequence user.human.profile.displayName)
same 'display name' "$me_name" "$MY_NAME"
same sequence "$me_sequence" "$sequence"
line op=$CURRENT "sequence=$sequence" "userId=$me_id" "displayName=$me_name"

# 2. AddHumanUser: POST /v2/users/human with the email code returned, read back with GET /v2/users/{user_id}.
CURRENT=AddHumanUser
USERNAME="ada-$RUN"
res="$(call POST /v2/users/human "{\"username\":\"$USERNAME\",\"organization\":{\"orgId\":\"$ORG_ID\"},
  \"profile\":{\"givenName\":\"Ada\",\"familyName\":\"Lovelace\",\"gender\":\"GENDER_FEMALE\"},
  \"email\":{\"email\":\"$USERNAME@example.com\",\"returnCode\":{}},\"password\":{\"password\":\"Secr3t!pass\",\"changeRequired\":true}}")"
{ read -r USER_ID; read -r sequence; read -r email_code; } < <(get "$res" userId details.sequence emailCode)
res="$(call GET "/v2/users/$USER_ID")"
{ read -r username; read -r user_sequence; read -r owner; } < <(get "$res" user.username details.sequence details.resourceOwner)
same username "$username" "$USERNAME"
same sequence "$user_sequence" "$sequence"
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "orgId=$owner" "username=$username" "emailCode:=$([ -n "$email_code" ] && echo true || echo false)"

# 3. UpdateHumanProfile: PUT /management/v1/users/{user_id}/profile, read back with GET /management/v1/users/{id}.
CURRENT=UpdateHumanProfile
res="$(call PUT "/management/v1/users/$USER_ID/profile" '{"firstName":"Augusta Ada","lastName":"King","displayName":"Ada King"}')"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(call GET "/management/v1/users/$USER_ID")"
{ read -r first; read -r last; read -r display; } < <(get "$res" user.human.profile.firstName user.human.profile.lastName user.human.profile.displayName)
same profile "$first/$last/$display" "Augusta Ada/King/Ada King"
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "firstName=$first" "lastName=$last" "displayName=$display"

# 4. SetEmail: POST /v2/users/{user_id}/email with the code returned, then POST .../email/verify
# with it; read back with GET /v2/users/{user_id}.
CURRENT=SetEmail
EMAIL="countess-$RUN@example.com"
res="$(call POST "/v2/users/$USER_ID/email" "{\"email\":\"$EMAIL\",\"returnCode\":{}}")"
{ read -r sequence; read -r code; } < <(get "$res" details.sequence verificationCode)
res="$(call POST "/v2/users/$USER_ID/email/verify" "{\"verificationCode\":\"$code\"}")"
{ read -r verified_sequence; } < <(get "$res" details.sequence)
res="$(call GET "/v2/users/$USER_ID")"
{ read -r email; read -r is_verified; } < <(get "$res" user.human.email.email user.human.email.isVerified)
same email "$email/$is_verified" "$EMAIL/true"
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "email=$email" "verifiedSequence=$verified_sequence" "isVerified:=$is_verified"

# 5. UpdateHumanPhone: PUT /management/v1/users/{user_id}/phone, read back with GET /management/v1/users/{id}.
CURRENT=UpdateHumanPhone
res="$(call PUT "/management/v1/users/$USER_ID/phone" '{"phone":"+41791234567","isPhoneVerified":true}')"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(call GET "/management/v1/users/$USER_ID")"
{ read -r phone; read -r phone_verified; } < <(get "$res" user.human.phone.phone user.human.phone.isPhoneVerified)
same phone "$phone/$phone_verified" "+41791234567/true"
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "phone=$phone" "isPhoneVerified:=$phone_verified"

# 6. SetHumanPassword: POST /management/v1/users/{user_id}/password, read back with GET /v2/users/{user_id}
# (proto3 JSON leaves passwordChangeRequired out when it is false).
CURRENT=SetHumanPassword
res="$(call POST "/management/v1/users/$USER_ID/password" "{\"password\":\"N3w!$RUN\",\"noChangeRequired\":true}")"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(call GET "/v2/users/$USER_ID")"
{ read -r change_required; } < <(get "$res" user.human.passwordChangeRequired)
same passwordChangeRequired "${change_required:-false}" false
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "passwordChangeRequired:=${change_required:-false}"

# 7. RegisterU2F: POST /v2/users/{user_id}/u2f; the software authenticator answers the creation
# options; VerifyU2FRegistration: POST /v2/users/{user_id}/u2f/{u2f_id}; read back with GET /v2/users/{user_id}.
CURRENT=VerifyU2FRegistration
res="$(call POST "/v2/users/$USER_ID/u2f" '{}')"
{ read -r U2F_ID; read -r options; } < <(get "$res" u2fId publicKeyCredentialCreationOptions)
credential="$(printf '%s' "$options" | node "$HERE/soft-authenticator.mjs")"
res="$(call POST "/v2/users/$USER_ID/u2f/$U2F_ID" "{\"publicKeyCredential\":$credential,\"tokenName\":\"Soft key $RUN\"}")"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(call GET "/v2/users/$USER_ID")"
{ read -r user_sequence; } < <(get "$res" details.sequence)
same 'user sequence' "$user_sequence" "$sequence"
line op=$CURRENT "sequence=$sequence" "userId=$USER_ID" "u2fId=$U2F_ID" "tokenName=Soft key $RUN" "userSequence=$user_sequence"

# 8. UpdateOrgIDPOIDCConfig (deprecated): PUT /management/v1/idps/{idp_id}/oidc_config on an IdP
# added with POST /management/v1/idps/oidc; read back with GET /management/v1/idps/{id}.
CURRENT=UpdateOrgIDPOIDCConfig
res="$(call POST /management/v1/idps/oidc "{\"name\":\"IdP $RUN\",\"issuer\":\"https://accounts.example.com\",
  \"clientId\":\"client-1\",\"clientSecret\":\"s3cret\",\"scopes\":[\"openid\",\"email\"]}")"
{ read -r IDP_ID; } < <(get "$res" idpId)
res="$(call PUT "/management/v1/idps/$IDP_ID/oidc_config" "{\"issuer\":\"https://login.example.org\",\"clientId\":\"client-$RUN\",
  \"scopes\":[\"openid\",\"profile\"],\"displayNameMapping\":\"OIDC_MAPPING_FIELD_PREFERRED_USERNAME\",\"usernameMapping\":\"OIDC_MAPPING_FIELD_EMAIL\"}")"
{ read -r sequence; } < <(get "$res" details.sequence)
res="$(call GET "/management/v1/idps/$IDP_ID")"
{ read -r issuer; read -r client_id; read -r scopes; } < <(get "$res" idp.oidcConfig.issuer idp.oidcConfig.clientId idp.oidcConfig.scopes)
same 'OIDC config' "$issuer $client_id $scopes" "https://login.example.org client-$RUN [\"openid\",\"profile\"]"
line op=$CURRENT "sequence=$sequence" "idpId=$IDP_ID" "issuer=$issuer" "clientId=$client_id" "scopes:=$scopes"

# 9. AddSAMLApp: POST /management/v1/projects/{project_id}/apps/saml with the SP's metadata XML, in a
# project added with POST /management/v1/projects; read back with GET /management/v1/projects/{id}.
CURRENT=AddSAMLApp
res="$(call POST /management/v1/projects "{\"name\":\"Project $RUN\"}")"
{ read -r PROJECT_ID; } < <(get "$res" id)
res="$(call POST "/management/v1/projects/$PROJECT_ID/apps/saml" "{\"name\":\"SP $RUN\",\"metadataXml\":\"$(sp_metadata)\"}")"
{ read -r APP_ID; read -r sequence; } < <(get "$res" appId details.sequence)
res="$(call GET "/management/v1/projects/$PROJECT_ID")"
{ read -r project_sequence; read -r project_name; } < <(get "$res" project.details.sequence project.name)
same 'project sequence' "$project_sequence" "$sequence"
line op=$CURRENT "sequence=$sequence" "projectId=$PROJECT_ID" "appId=$APP_ID" "projectName=$project_name"

line summary:=true transport=rest operations:=9 \
  'done:=["UpdateMyProfile","AddHumanUser","UpdateHumanProfile","SetEmail","UpdateHumanPhone","SetHumanPassword","VerifyU2FRegistration","UpdateOrgIDPOIDCConfig","AddSAMLApp"]' \
  "orgId=$ORG_ID" "userId=$USER_ID" "idpId=$IDP_ID" "projectId=$PROJECT_ID" "appId=$APP_ID"
