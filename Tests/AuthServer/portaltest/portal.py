"""The ArcGIS portal face: /arcgis/sharing/rest/... and /arcgis/rest/...

Every token here is a real DOT token: the views translate ArcGIS parameters and
responses and call DOT's own authorization, token and revocation machinery.
"""
import hashlib
import json
from datetime import timedelta
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.http import HttpResponseRedirect, JsonResponse, QueryDict
from django.shortcuts import render
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.views import AuthorizationView
from oauth2_provider.views.mixins import OAuthLibMixin

from .models import PortalGrantInfo, PortalRefreshInfo
from .runtime import get_config, request_context

OUT_OF_BAND_REDIRECT = "urn:ietf:wg:oauth:2.0:oob"

# ArcGIS: the refresh-token lifetime defaults to two weeks and is capped at 90 days.
DEFAULT_REFRESH_MINUTES = 20160
MAX_REFRESH_MINUTES = 129600
DEFAULT_GENERATE_TOKEN_MINUTES = 60
MAX_GENERATE_TOKEN_MINUTES = 525600
GENERATE_TOKEN_CLIENT_ID = "arcgis-generate-token"

AccessToken = get_access_token_model()
Application = get_application_model()


def checksum(token):
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def envelope(code, message, error=None, description=None, details=None):
    """The ArcGIS error envelope, always with HTTP 200."""
    body = {"code": code}
    if error:
        body["error"] = error
        body["error_description"] = description or message
    body["message"] = message
    body["details"] = list(details or [])
    return JsonResponse({"error": body}, status=200)


def portal_url(path=""):
    return f"{settings.BASE_URL}/arcgis{path}"


def _minutes(value, default, maximum):
    try:
        minutes = int(value)
    except (TypeError, ValueError):
        return default
    if minutes <= 0:
        return default
    return min(minutes, maximum)


def request_token(request):
    """The token of an ArcGIS request: `token=` (query or form), X-Esri-Authorization or
    Authorization, both `Bearer <token>`."""
    token = request.GET.get("token") or (request.POST.get("token") if request.method == "POST" else None)
    for header in ("HTTP_X_ESRI_AUTHORIZATION", "HTTP_AUTHORIZATION"):
        value = request.META.get(header, "")
        if not token and value[:7].lower() == "bearer ":
            token = value[7:].strip()
    return token or None


def valid_access_token(token):
    """DOT's AccessToken for `token` if it exists and has not expired, else None."""
    if not token:
        return None
    access_token = (
        AccessToken.objects.select_related("user", "application")
        .filter(token_checksum=checksum(token))
        .first()
    )
    if access_token is None or access_token.is_expired():
        return None
    return access_token


def protected(view):
    """499 without a token, 498 with an invalid, expired or revoked one (HTTP 200 envelopes)."""

    def wrapper(request, *args, **kwargs):
        token = request_token(request)
        if not token:
            return envelope(499, "Token Required")
        access_token = valid_access_token(token)
        if access_token is None:
            return envelope(498, "Invalid token.")
        request.portal_access_token = access_token
        return view(request, *args, **kwargs)

    return csrf_exempt(wrapper)


def _user_json(user):
    return {
        "username": user.username,
        "fullName": user.get_full_name() or user.username,
        "firstName": user.first_name,
        "lastName": user.last_name,
        "email": user.email,
        "orgId": "portalauthtest0org",
        "role": "org_publisher",
        "privileges": ["portal:user:createItem", "portal:user:viewOrgUsers"],
        "access": "org",
    }


@protected
def portals_self(request):
    access_token = request.portal_access_token
    body = {
        "id": "portalauthtest0org",
        "name": "PortalAuth Test Portal",
        "urlKey": "portalauth-test",
        "isPortal": False,
        "portalName": "PortalAuth Test Portal",
        "portalHostname": settings.BASE_URL.split("://", 1)[1] + "/arcgis",
        "currentVersion": "2025.1",
        "supportsOAuth": True,
        "allSSL": False,
        "access": "private",
        "helperServices": {},
    }
    if access_token.user is not None:
        body["user"] = _user_json(access_token.user)
    else:
        body["appInfo"] = {
            "appId": access_token.application.client_id if access_token.application else None,
            "orgId": "portalauthtest0org",
            "privileges": ["portal:app:access"],
        }
    return JsonResponse(body)


@protected
def rest_services(request, path=""):
    access_token = request.portal_access_token
    return JsonResponse(
        {
            "currentVersion": 11.3,
            "folders": [],
            "services": [],
            "path": "/" + path,
            "user": access_token.user.username if access_token.user else None,
        }
    )


def _info_body():
    return {
        "currentVersion": 11.3,
        "fullVersion": "11.3.0",
        "owningSystemUrl": portal_url(),
        "owningTenant": "portalauthtest0org",
        "authInfo": {
            "isTokenBasedSecurity": True,
            "tokenServicesUrl": portal_url("/sharing/rest/generateToken"),
            "shortLivedTokenValidity": DEFAULT_GENERATE_TOKEN_MINUTES,
        },
    }


def rest_info(request):
    return JsonResponse(_info_body())


def standalone_rest_info(request):
    """`rest/info` of a stand-alone server: a token service and no `owningSystemUrl` (not federated)."""
    body = _info_body()
    body.pop("owningSystemUrl")
    body.pop("owningTenant")
    return JsonResponse(body)


def sharing_info(request):
    body = _info_body()
    body.pop("currentVersion")
    body.pop("fullVersion")
    return JsonResponse(body)


class PortalAuthorizationView(AuthorizationView):
    """DOT's authorization view (login, consent, PKCE, redirect checks) at the ArcGIS path.
    ArcGIS-only parameters (`expiration`, `locale`, `style`…) are ignored by DOT; the
    expiration is remembered against the issued code. The RFC 9207 `iss` parameter is
    removed: a portal does not send it."""

    def redirect(self, redirect_to, application):
        parts = urlsplit(redirect_to)
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "iss"]
        code = dict(query).get("code")
        if code:
            source = self.request.POST if self.request.method == "POST" else self.request.GET
            minutes = _minutes(
                self.request.GET.get("expiration", source.get("expiration")),
                DEFAULT_REFRESH_MINUTES,
                MAX_REFRESH_MINUTES,
            )
            PortalGrantInfo.objects.update_or_create(code=code, defaults={"expiration_minutes": minutes})
        if redirect_to.startswith(OUT_OF_BAND_REDIRECT + "?"):
            # ArcGIS's out-of-band redirect: the portal's own approval page shows the code (or the error).
            return HttpResponseRedirect("/arcgis/sharing/oauth2/approval?" + urlencode(query))
        redirect_to = urlunsplit(parts._replace(query=urlencode(query)))
        return super().redirect(redirect_to, application)


def out_of_band_approval(request):
    """GET /arcgis/sharing/oauth2/approval: where a sign-in with the out-of-band redirect ends; shows the
    code to copy into the application (or the error)."""
    context = {"code": request.GET.get("code", ""), "error": request.GET.get("error", ""),
               "error_description": request.GET.get("error_description", "")}
    response = render(request, "portaltest/oob_approval.html", context)
    response["Cache-Control"] = "no-store"
    response["Referrer-Policy"] = "no-referrer"
    return response


def _dot_json(body):
    try:
        return json.loads(body) if body else {}
    except ValueError:
        return {"error": "server_error", "error_description": "unparsable token endpoint answer"}


@method_decorator(csrf_exempt, name="dispatch")
class PortalTokenView(OAuthLibMixin, View):
    """POST /arcgis/sharing/rest/oauth2/token: authorization_code, refresh_token,
    exchange_refresh_token, client_credentials — through DOT's token endpoint."""

    def get(self, request):
        return envelope(405, "Method not supported.", "invalid_request", "Use POST.")

    def _call_dot(self, request, fields, rotate=None, expires_in=None):
        data = QueryDict(mutable=True)
        for key, value in fields.items():
            if value is not None:
                data[key] = value
        request.POST = data
        marker = request_context.set({"rotate": rotate, "expires_in": expires_in})
        try:
            _url, _headers, body, status = self.create_token_response(request)
        finally:
            request_context.reset(marker)
        return status, _dot_json(body)

    @staticmethod
    def _error(status, body, grant_type, code=400):
        error = body.get("error", "invalid_request")
        description = body.get("error_description") or {
            ("invalid_grant", "authorization_code"): "Invalid authorization code",
            ("invalid_grant", "refresh_token"): "Invalid refresh_token",
            ("invalid_grant", "exchange_refresh_token"): "Invalid refresh_token",
            ("invalid_client", grant_type): "Invalid client_id",
            ("unsupported_grant_type", grant_type): "Unsupported grant_type",
        }.get((error, grant_type), error)
        return envelope(code, description, error, description)

    @staticmethod
    def _token_owner(access_token_value):
        row = (
            AccessToken.objects.select_related("user")
            .filter(token_checksum=checksum(access_token_value))
            .first()
        )
        return row.user.username if row and row.user else None

    def _success(self, body, refresh_info=None, include_refresh=True):
        answer = {"access_token": body["access_token"], "expires_in": body.get("expires_in")}
        username = self._token_owner(body["access_token"])
        if username:
            answer["username"] = username
        answer["ssl"] = False
        if include_refresh and body.get("refresh_token") and refresh_info is not None:
            answer["refresh_token"] = body["refresh_token"]
            answer["refresh_token_expires_in"] = max(
                0, int((refresh_info.expires - timezone.now()).total_seconds())
            )
        return JsonResponse(answer)

    def post(self, request):
        grant_type = request.POST.get("grant_type", "")
        client_id = request.POST.get("client_id")
        if not client_id:
            return envelope(400, "Invalid client_id", "invalid_request", "client_id is required")

        if grant_type == "authorization_code":
            code = request.POST.get("code", "")
            info = PortalGrantInfo.objects.filter(code=code).first()
            minutes = info.expiration_minutes if info else DEFAULT_REFRESH_MINUTES
            status, body = self._call_dot(
                request,
                {
                    "grant_type": "authorization_code",
                    "code": code,
                    "client_id": client_id,
                    "client_secret": request.POST.get("client_secret"),
                    "redirect_uri": request.POST.get("redirect_uri"),
                    "code_verifier": request.POST.get("code_verifier"),
                },
            )
            if status != 200:
                return self._error(status, body, grant_type)
            if info:
                info.delete()
            refresh_info = None
            if body.get("refresh_token"):
                refresh_info, _ = PortalRefreshInfo.objects.update_or_create(
                    token_checksum=checksum(body["refresh_token"]),
                    defaults={
                        "expires": timezone.now() + timedelta(minutes=minutes),
                        "lifetime_minutes": minutes,
                    },
                )
            return self._success(body, refresh_info)

        if grant_type in ("refresh_token", "exchange_refresh_token"):
            refresh_token = request.POST.get("refresh_token", "")
            if not refresh_token:
                return envelope(400, "Invalid refresh_token", "invalid_request", "refresh_token is required")
            exchange = grant_type == "exchange_refresh_token"
            if exchange:
                redirect_uri = request.POST.get("redirect_uri", "")
                application = Application.objects.filter(client_id=client_id).first()
                if application is None:
                    return envelope(400, "Invalid client_id", "invalid_client", "Invalid client_id")
                if not redirect_uri or not application.redirect_uri_allowed(redirect_uri):
                    return envelope(400, "Invalid redirect_uri", "invalid_request", "Invalid redirect_uri")
            info = PortalRefreshInfo.objects.filter(token_checksum=checksum(refresh_token)).first()
            if info is not None and info.expires <= timezone.now():
                return envelope(498, "refresh_token expired", "invalid_grant", "refresh_token expired")
            rotate = True if exchange else get_config()["portal_rotate_refresh_tokens"]
            status, body = self._call_dot(
                request,
                {
                    "grant_type": "refresh_token",
                    "refresh_token": refresh_token,
                    "client_id": client_id,
                    "client_secret": request.POST.get("client_secret"),
                },
                rotate=rotate,
            )
            if status != 200:
                return self._error(status, body, grant_type)
            new_refresh = body.get("refresh_token")
            rotated = bool(new_refresh) and new_refresh != refresh_token
            refresh_info = info
            if rotated:
                minutes = info.lifetime_minutes if info else DEFAULT_REFRESH_MINUTES
                expires = (
                    timezone.now() + timedelta(minutes=minutes) if exchange or info is None else info.expires
                )
                refresh_info, _ = PortalRefreshInfo.objects.update_or_create(
                    token_checksum=checksum(new_refresh),
                    defaults={"expires": expires, "lifetime_minutes": minutes},
                )
                if info is not None:
                    info.delete()
            return self._success(body, refresh_info, include_refresh=rotated)

        if grant_type == "client_credentials":
            minutes = _minutes(request.POST.get("expiration"), 120, 20160)
            status, body = self._call_dot(
                request,
                {
                    "grant_type": "client_credentials",
                    "client_id": client_id,
                    "client_secret": request.POST.get("client_secret"),
                },
                expires_in=minutes * 60,
            )
            if status != 200:
                return self._error(status, body, grant_type)
            return JsonResponse({"access_token": body["access_token"], "expires_in": body.get("expires_in")})

        return envelope(400, "Unsupported grant_type", "unsupported_grant_type", "Unsupported grant_type")


@method_decorator(csrf_exempt, name="dispatch")
class PortalRevokeTokenView(OAuthLibMixin, View):
    """POST /arcgis/sharing/rest/oauth2/revokeToken (client_id, auth_token,
    token_type_hint): DOT's RFC 7009 revocation; success even for unknown tokens."""

    def post(self, request):
        token = request.POST.get("auth_token") or request.POST.get("token")
        client_id = request.POST.get("client_id")
        if not client_id:
            return envelope(400, "Invalid client_id", "invalid_request", "client_id is required")
        if not token:
            return envelope(400, "auth_token is required", "invalid_request", "auth_token is required")
        data = QueryDict(mutable=True)
        data["token"] = token
        data["client_id"] = client_id
        if request.POST.get("token_type_hint"):
            data["token_type_hint"] = request.POST["token_type_hint"]
        if request.POST.get("client_secret"):
            data["client_secret"] = request.POST["client_secret"]
        request.POST = data
        _url, _headers, body, status = self.create_revocation_response(request)
        if status == 200:
            return JsonResponse({"success": True})
        error = _dot_json(body)
        message = "Invalid client_id" if error.get("error") == "invalid_client" else "Unable to revoke token."
        return envelope(400, message, error.get("error", "invalid_request"), error.get("error_description"))


@method_decorator(csrf_exempt, name="dispatch")
class GenerateTokenView(OAuthLibMixin, View):
    """POST /arcgis/sharing/rest/generateToken: username/password → an ArcGIS token,
    minted by DOT's resource-owner password grant for an internal client."""

    def get(self, request):
        return envelope(400, "Unable to generate token.", details=["generateToken requires POST."])

    def post(self, request):
        username = request.POST.get("username", "")
        password = request.POST.get("password", "")
        if not username or not password:
            details = []
            if not username:
                details.append("'username' must be specified.")
            if not password:
                details.append("'password' must be specified.")
            return envelope(400, "Unable to generate token.", details=details)
        minutes = _minutes(
            request.POST.get("expiration"), DEFAULT_GENERATE_TOKEN_MINUTES, MAX_GENERATE_TOKEN_MINUTES
        )
        data = QueryDict(mutable=True)
        data.update(
            {
                "grant_type": "password",
                "username": username,
                "password": password,
                "client_id": GENERATE_TOKEN_CLIENT_ID,
                "scope": "read write",
            }
        )
        request.POST = data
        marker = request_context.set({"rotate": None, "expires_in": minutes * 60})
        try:
            _url, _headers, body, status = self.create_token_response(request)
        finally:
            request_context.reset(marker)
        answer = _dot_json(body)
        if status != 200 or "access_token" not in answer:
            return envelope(400, "Unable to generate token.", details=["Invalid username or password."])
        row = AccessToken.objects.filter(token_checksum=checksum(answer["access_token"])).first()
        expires_ms = int(row.expires.timestamp() * 1000)
        return JsonResponse({"token": answer["access_token"], "expires": expires_ms, "ssl": False})
