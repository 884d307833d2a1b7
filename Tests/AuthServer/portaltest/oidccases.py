"""OpenID Connect relying-party cases on the OIDC face (/o/): the server misbehaves the way one case of the OpenID
Foundation's relying-party certification list (rp-*) asks, chosen at run time with /testctl/config's "oidc_case"
(back to "" — behave — with DELETE /testctl/config).

The ID tokens of the cases are DOT's own claims re-signed (jwcrypto) with keys made at start-up and published in
the JWK Set beside DOT's key. /testctl/oidc tells what the relying party asked of the key and UserInfo endpoints
(counts, whether the access token came in the Authorization header); POST /testctl/oidc resets the counts.
"""
import base64
import json
import threading

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt
from jwcrypto import jwk, jws
from jwcrypto.common import json_encode

from . import runtime

# case -> what the server does
CASES = {
    "": "behave",
    "id_token-bad-sig-rs256": "the ID token's RS256 signature (DOT's key) is damaged",
    "id_token-bad-sig-es256": "the ID token is signed ES256 with a published key, and the signature is damaged",
    "id_token-kid-absent-multiple-jwks": "the ID token has no kid; the JWK Set holds two RSA keys",
    "key-rotation": "the ID token is signed with a new key, published only from now on",
    "id_token-sub": "the ID token has no sub",
    "id_token-iat": "the ID token has no iat",
    "id_token-sub-switch-on-refresh": "a refreshed ID token is for another user (issue 25.6)",
    "discovery-issuer-not-matching-config": "the discovery document's issuer is not the URL it is served for",
    "scope-userinfo-claims": "UserInfo gives name and email",
    "userinfo-bad-sub-claim": "UserInfo gives another sub than the ID token's",
}

_KEYS = {
    "rsa": jwk.JWK.generate(kty="RSA", size=2048, kid="case-rsa"),
    "ec": jwk.JWK.generate(kty="EC", crv="P-256", kid="case-ec"),
    "rotated": jwk.JWK.generate(kty="RSA", size=2048, kid="case-rotated"),
}

_lock = threading.Lock()


def _new_log():
    return {"jwks_requests": 0, "discovery_requests": 0, "userinfo_requests": 0, "userinfo_bearer_header": 0,
            "userinfo_token_elsewhere": 0}


_log = _new_log()


def _count(key):
    with _lock:
        _log[key] += 1


@csrf_exempt
def report(request):
    """GET: what the relying party asked since the last reset; POST: reset."""
    global _log
    with _lock:
        if request.method == "POST":
            _log = _new_log()
        return JsonResponse(dict(_log, case=runtime.get_config()["oidc_case"]))


def _b64decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(claims, key, alg, kid=True):
    header = {"alg": alg, "typ": "JWT"}
    if kid:
        header["kid"] = key.key_id
    token = jws.JWS(json_encode(claims).encode())
    token.add_signature(key, alg=alg, protected=json_encode(header))
    return token.serialize(compact=True)


def _damage(token):
    head, body, signature = token.split(".")
    raw = bytearray(_b64decode(signature))
    raw[len(raw) // 2] ^= 0x01
    return ".".join([head, body, base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")])


def _id_token(case, token, grant_type):
    """The ID token DOT issued, changed as `case` asks."""
    claims = json.loads(_b64decode(token.split(".")[1]))
    if case == "id_token-bad-sig-rs256":
        return _damage(token)
    if case == "id_token-bad-sig-es256":
        return _damage(_sign(claims, _KEYS["ec"], "ES256"))
    if case == "id_token-kid-absent-multiple-jwks":
        return _sign(claims, _KEYS["rsa"], "RS256", kid=False)
    if case == "key-rotation":
        return _sign(claims, _KEYS["rotated"], "RS256")
    if case in ("id_token-sub", "id_token-iat"):
        claims.pop(case.split("-")[-1], None)
        return _sign(claims, _KEYS["rsa"], "RS256")
    if case == "id_token-sub-switch-on-refresh" and grant_type == "refresh_token":
        claims["sub"] = "someone-else"
        return _sign(claims, _KEYS["rsa"], "RS256")
    return token


class OIDCCaseMiddleware:
    """Applies the chosen case to the OIDC face's answers, and notes what was asked of it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        path = request.path
        if path.startswith("/o/.well-known/jwks"):
            _count("jwks_requests")
        elif path.startswith("/o/.well-known/openid-configuration"):
            _count("discovery_requests")
        elif path.startswith("/o/userinfo"):
            _count("userinfo_requests")
            if request.META.get("HTTP_AUTHORIZATION", "").startswith("Bearer "):
                _count("userinfo_bearer_header")
            if "access_token" in request.GET or "access_token" in request.POST:
                _count("userinfo_token_elsewhere")
        grant_type = request.POST.get("grant_type", "") if path == "/o/token/" and request.method == "POST" else ""
        response = self.get_response(request)
        case = runtime.get_config()["oidc_case"]
        if not case or response.status_code != 200:
            return response
        try:
            document = json.loads(response.content)
        except ValueError:
            return response
        if path == "/o/token/" and isinstance(document.get("id_token"), str):
            document["id_token"] = _id_token(case, document["id_token"], grant_type)
        elif path.startswith("/o/.well-known/jwks"):
            extra = ["rsa", "ec"] + (["rotated"] if case == "key-rotation" else [])
            document.setdefault("keys", []).extend(json.loads(_KEYS[name].export_public()) for name in extra)
        elif path.startswith("/o/.well-known/openid-configuration"):
            if case == "discovery-issuer-not-matching-config":
                document["issuer"] = settings.ISSUER + "/elsewhere"
        elif path.startswith("/o/userinfo"):
            if case == "scope-userinfo-claims":
                document.update({"name": "Alice Liddell", "email": "alice@example.org"})
            if case == "userinfo-bad-sub-claim":
                document["sub"] = "someone-else"
        else:
            return response
        changed = JsonResponse(document)
        for header in ("Cache-Control", "Pragma"):
            if header in response:
                changed[header] = response[header]
        return changed
