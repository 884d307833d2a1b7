"""An application behind an identity-aware proxy (like Entra application proxy):
/iap/app/<anything>. A valid DOT access token, or an unexpired ID token this provider signed (what the
ArcGIS Maps SDK sends to hosts behind a proxy), in `Authorization: Bearer` → 200 JSON (`token_kind` says which).
Without one: a browser-like request (no JSON in Accept) is redirected (302) to the
IdP's authorize endpoint; a request that accepts JSON gets 401 with
`WWW-Authenticate: Bearer …`."""
import json
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponseRedirect, JsonResponse
from django.views.decorators.csrf import csrf_exempt

from jwcrypto import jwk
from jwcrypto import jwt as jwcrypto_jwt
from oauth2_provider.models import get_id_token_model

from .portal import valid_access_token

REALM = "portal-auth-test-iap"


def _bearer(request):
    value = request.META.get("HTTP_AUTHORIZATION", "")
    if value[:7].lower() == "bearer ":
        return value[7:].strip() or None
    return None


def _wants_json(request):
    accept = request.META.get("HTTP_ACCEPT", "")
    return "application/json" in accept or request.META.get("HTTP_X_REQUESTED_WITH") == "XMLHttpRequest"


def _valid_id_token(token):
    """DOT's IDToken for `token` when it is a JWT signed with this provider's key, not expired, and issued here."""
    if not token or token.count(".") != 2:
        return None
    try:
        key = jwk.JWK.from_pem(settings.OIDC_RSA_PRIVATE_KEY.encode())
        claims = json.loads(jwcrypto_jwt.JWT(key=key, jwt=token, check_claims={"exp": None}).claims)
        record = get_id_token_model().objects.select_related("user", "application").filter(jti=claims.get("jti")).first()
    except Exception:  # a forged, malformed or expired token is simply not valid
        return None
    if record is None or record.is_expired() or record.user is None:
        return None
    return record


@csrf_exempt
def iap_app(request, path=""):
    token = _bearer(request)
    access_token = valid_access_token(token)
    valid = access_token if access_token is not None and access_token.user is not None else _valid_id_token(token)
    if valid is not None:
        return JsonResponse(
            {
                "user": valid.user.username,
                "path": "/" + path,
                "method": request.method,
                "client_id": valid.application.client_id if valid.application else None,
                "scope": valid.scope,
                "token_kind": "access" if valid is access_token else "id",
            }
        )
    authorize = settings.ISSUER + "/authorize/"
    if _wants_json(request):
        challenge = f'Bearer realm="{REALM}", authorization_uri="{authorize}"'
        if token:
            challenge += ', error="invalid_token", error_description="The access token is invalid or expired"'
        response = JsonResponse(
            {"error": "invalid_token" if token else "unauthorized", "message": "Sign in through the identity provider."},
            status=401,
        )
        response["WWW-Authenticate"] = challenge
        return response
    # What a proxy does for a browser: send it to the IdP (this request is not meant to
    # succeed; a client only needs to recognise the redirect to the authorize endpoint).
    query = urlencode(
        {
            "client_id": "portal-auth-test",
            "response_type": "code",
            "scope": "openid profile",
            "redirect_uri": settings.BASE_URL.replace("127.0.0.1", "localhost") + "/iap/app/",
            "state": "iap-proxy",
        }
    )
    return HttpResponseRedirect(f"{authorize}?{query}")
