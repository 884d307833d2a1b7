"""An application behind an identity-aware proxy (like Entra application proxy):
/iap/app/<anything>. A valid DOT access token in `Authorization: Bearer` → 200 JSON.
Without one: a browser-like request (no JSON in Accept) is redirected (302) to the
IdP's authorize endpoint; a request that accepts JSON gets 401 with
`WWW-Authenticate: Bearer …`."""
from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpResponseRedirect, JsonResponse
from django.views.decorators.csrf import csrf_exempt

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


@csrf_exempt
def iap_app(request, path=""):
    token = _bearer(request)
    access_token = valid_access_token(token)
    if access_token is not None and access_token.user is not None:
        return JsonResponse(
            {
                "user": access_token.user.username,
                "path": "/" + path,
                "method": request.method,
                "client_id": access_token.application.client_id if access_token.application else None,
                "scope": access_token.scope,
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
