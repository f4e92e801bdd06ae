"""ZITADEL's Python SDK (zitadel-client, unchanged) against the gateway: every operation the
gateway serves for it, on the v2 and the v2beta user and organization services, and the
refusals. Run by test/sdk.python.test.ts with GATEWAY (http://127.0.0.1:<port>), TOKEN (an
administrator's bearer token) and RUN (a word unique to the run).

Prints one JSON object a line: {"version", "op", "ok": true, "result": <the response as the
SDK decoded it>} or {"version", "op", "ok": false, "status": <HTTP status>, "body": <the error
body>}. RegisterU2F prints {"need": "credential", "options": ...} and reads the credential,
one JSON line, from standard input (the test answers with a software authenticator).
"""

import json
import os
import sys

import zitadel_client.models as models
from zitadel_client import Zitadel
from zitadel_client.exceptions import ApiError

GATEWAY = os.environ["GATEWAY"]
TOKEN = os.environ["TOKEN"]
RUN = os.environ["RUN"]


def emit(line):
    print(json.dumps(line, default=str), flush=True)


def call(version, op, fn, *args):
    """Calls the SDK; prints and returns the outcome (the decoded response, or the ApiError)."""
    try:
        response = fn(*args)
    except ApiError as e:
        body = e.response_body
        try:
            body = json.loads(body)
        except (TypeError, ValueError):
            pass
        emit({"version": version, "op": op, "ok": False, "status": e.code, "body": body})
        return None
    result = response.to_dict() if response is not None else None
    emit({"version": version, "op": op, "ok": True, "result": result})
    return result


def run(version, zitadel):
    beta = version == "v2beta"
    users = zitadel.beta_users if beta else zitadel.users
    orgs = zitadel.beta_organizations if beta else zitadel.organizations
    user_model = "BetaUserService" if beta else "UserService"

    def req(name, body):
        return getattr(models, user_model + name).from_dict(body)

    tag = f"{RUN}-{version}"
    if beta:
        org = call(version, "CreateOrganization", orgs.create_organization,
                   models.BetaOrganizationServiceCreateOrganizationRequest.from_dict({"name": f"Python SDK {tag}"}))
        org_id = org and org.get("id")
    else:
        org = call(version, "AddOrganization", orgs.add_organization,
                   models.OrganizationServiceAddOrganizationRequest.from_dict({"name": f"Python SDK {tag}"}))
        org_id = org and org.get("organizationId")
    if not org_id:
        return

    added = call(version, "AddHumanUser", users.add_human_user, req("AddHumanUserRequest", {
        "username": f"py-{tag}",
        "organization": {"orgId": org_id},
        "profile": {"givenName": "Ada", "familyName": "Lovelace", "displayName": "Ada L."},
        "email": {"email": f"ada-{tag}@example.com", "returnCode": {}},
        "phone": {"phone": "+41791234567", "returnCode": {}},
    }))
    if not added:
        return
    user_id = added["userId"]
    second = call(version, "AddHumanUser (second)", users.add_human_user, req("AddHumanUserRequest", {
        "username": f"py2-{tag}",
        "organization": {"orgId": org_id},
        "profile": {"givenName": "Grace", "familyName": "Hopper"},
        "email": {"email": f"grace-{tag}@example.com", "isVerified": True},
    }))

    call(version, "VerifyEmail", users.verify_email,
         req("VerifyEmailRequest", {"userId": user_id, "verificationCode": added.get("emailCode")}))
    call(version, "VerifyPhone", users.verify_phone,
         req("VerifyPhoneRequest", {"userId": user_id, "verificationCode": added.get("phoneCode")}))
    changed = call(version, "SetEmail", users.set_email,
                   req("SetEmailRequest", {"userId": user_id, "email": f"ada.new-{tag}@example.com", "returnCode": {}}))
    if changed:
        call(version, "VerifyEmail (new address)", users.verify_email,
             req("VerifyEmailRequest", {"userId": user_id, "verificationCode": changed.get("verificationCode")}))
    call(version, "GetUserByID", users.get_user_by_id, req("GetUserByIDRequest", {"userId": user_id}))

    ids = [user_id, second["userId"] if second else "none", f"no-such-user-{tag}"]
    call(version, "ListUsers", users.list_users, req("ListUsersRequest", {
        "query": {"limit": 10, "asc": True},
        "sortingColumn": "USER_FIELD_NAME_USER_NAME",
        "queries": [{"organizationIdQuery": {"organizationId": org_id}}, {"inUserIdsQuery": {"userIds": ids}}],
    }))
    call(version, "ListUsers (or, ENDS_WITH)", users.list_users, req("ListUsersRequest", {
        "queries": [
            {"organizationIdQuery": {"organizationId": org_id}},
            {"orQuery": {"queries": [
                {"emailQuery": {"emailAddress": f"-{tag}@EXAMPLE.com", "method": "TEXT_QUERY_METHOD_ENDS_WITH_IGNORE_CASE"}},
                {"inUserIdsQuery": {"userIds": [user_id]}},
            ]}},
            {"notQuery": {"query": {"userNameQuery": {"userName": "py2-", "method": "TEXT_QUERY_METHOD_STARTS_WITH"}}}},
        ],
    }))

    if not beta:
        registered = call(version, "RegisterU2F", users.register_u2_f, req("RegisterU2FRequest", {"userId": user_id}))
        if registered:
            emit({"need": "credential", "options": registered.get("publicKeyCredentialCreationOptions")})
            credential = json.loads(sys.stdin.readline())
            call(version, "VerifyU2FRegistration", users.verify_u2_f_registration, req("VerifyU2FRegistrationRequest", {
                "userId": user_id, "u2fId": registered.get("u2fId"), "publicKeyCredential": credential, "tokenName": f"Soft key {tag}",
            }))

    # Methods of the service that the gateway does not serve (v1's UpdateHumanProfile and
    # SetHumanPassword are its profile and password operations).
    call(version, "UpdateHumanUser (not served)", users.update_human_user,
         req("UpdateHumanUserRequest", {"userId": user_id, "profile": {"givenName": "Augusta", "familyName": "King"}}))
    call(version, "SetPassword (not served)", users.set_password,
         req("SetPasswordRequest", {"userId": user_id, "newPassword": {"password": "Secr3t!pass", "changeRequired": False}}))

    # The refusals: 404 not_found, 400 invalid_argument with its BadRequest, 401.
    call(version, "GetUserByID (unknown)", users.get_user_by_id, req("GetUserByIDRequest", {"userId": f"no-such-user-{tag}"}))
    call(version, "AddHumanUser (invalid)", users.add_human_user, req("AddHumanUserRequest", {
        "organization": {"orgId": org_id},
        "profile": {"givenName": "", "familyName": "Lovelace"},
        "email": {"email": "not an email"},
    }))
    anonymous = Zitadel.with_access_token(GATEWAY, "not-a-token")
    call(version, "GetUserByID (bad token)", (anonymous.beta_users if beta else anonymous.users).get_user_by_id,
         req("GetUserByIDRequest", {"userId": user_id}))


def main():
    zitadel = Zitadel.with_access_token(GATEWAY, TOKEN)
    for version in sys.argv[1:] or ["v2", "v2beta"]:
        run(version, zitadel)
    emit({"done": True})


if __name__ == "__main__":
    main()
