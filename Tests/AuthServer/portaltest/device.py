"""The device authorization grant (RFC 8628) on the OIDC face: DOT's own views, plus what
DOT 3.4 leaves out and the tests need.

- Discovery names the `device_authorization_endpoint` (DOT's document does not).
- Device-grant token responses carry an ID token when `openid` was granted, like the
  authorization-code grant's (oauthlib's device grant has no OpenID Connect variant).
- The device authorization endpoint works with oauthlib 4, whose answer also names the
  granted `scope` (DOT 3.4's view passes every answer field to a dataclass without one).
- Polls sooner than the grant's interval are answered `slow_down`, and each slow_down adds
  5 s to the interval the client must keep (RFC 8628 §3.5; DOT never sends it); the test
  controls can also force it (`/testctl/config` `device_slow_down_polls`) and set the
  `interval` and `expires_in` of new codes (`device_interval_seconds`, `device_code_seconds`).
- A grant past its expiry answers `expired_token` (DOT checks expiry only on the
  verification page).
- Every poll's answer is recorded in order (`/testctl/stats` `device_polls`).
"""
import json

from django.conf import settings
from oauthlib.oauth2.rfc6749 import errors as rfc6749_errors
from oauthlib.oauth2.rfc8628 import errors as rfc8628_errors
from oauthlib.oauth2.rfc8628.grant_types import DeviceCodeGrant
from oauthlib.openid import Server as OpenIDServer
from oauthlib.openid.connect.core.grant_types.base import GrantTypeBase as OpenIDGrantTypeBase
from dataclasses import fields

from django import http
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.models import DeviceCodeResponse, DeviceRequest, create_device_grant, get_device_grant_model
from oauth2_provider.views import ConnectDiscoveryInfoView, DeviceAuthorizationView, TokenView

from . import runtime

DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def discovery(request, *args, **kwargs):
    """DOT's discovery document with the device authorization endpoint added."""
    response = ConnectDiscoveryInfoView.as_view()(request, *args, **kwargs)
    if response.status_code != 200:
        return response
    document = json.loads(response.content)
    document["device_authorization_endpoint"] = settings.ISSUER + "/device-authorization/"
    if runtime.get_config()["advertise_revocation"]:
        document["revocation_endpoint"] = settings.ISSUER + "/revoke_token/"
    grants = document.setdefault("grant_types_supported", [])
    if DEVICE_GRANT not in grants:
        grants.append(DEVICE_GRANT)
    response.content = json.dumps(document).encode()
    response["Content-Length"] = str(len(response.content))
    return response


class TestDeviceAuthorizationView(DeviceAuthorizationView):
    """DOT's device authorization endpoint, storing the grant with the scope oauthlib validated."""

    def post(self, request, *args, **kwargs):
        headers, response, status = self.create_device_authorization_response(request)
        if status != 200:
            return http.JsonResponse(data=json.loads(response), status=status, headers=headers)
        response.update(runtime.device_authorization_overrides())
        runtime.device_authorization_issued(response["device_code"], response.get("interval", oauth2_settings.DEVICE_FLOW_INTERVAL))
        known = {field.name for field in fields(DeviceCodeResponse)}
        scope = response.get("scope") or request.POST.get("scope", "").strip()
        create_device_grant(
            DeviceRequest(client_id=request.POST["client_id"], scope=scope),
            DeviceCodeResponse(**{key: value for key, value in response.items() if key in known}),
        )
        return http.JsonResponse(data=response, status=status, headers=headers)


class DeviceTokenView(TokenView):
    """DOT's token endpoint; device-code polls first pass the test controls and the expiry check."""

    def device_flow_token_response(self, request, device_code, *args, **kwargs):
        response = self._answer(request, device_code, *args, **kwargs)
        try:
            answer = json.loads(response.content)
            runtime.record_device_poll("token" if "access_token" in answer else str(answer.get("error", "unknown")))
        except ValueError:
            runtime.record_device_poll(f"HTTP {response.status_code}")
        return response

    def _answer(self, request, device_code, *args, **kwargs):
        grant = get_device_grant_model().objects.filter(device_code=device_code).first()
        if grant is not None:
            if runtime.take_device_slow_down(device_code, oauth2_settings.DEVICE_FLOW_INTERVAL):
                return self._error(rfc8628_errors.SlowDownError())
            if grant.status == grant.AUTHORIZATION_PENDING and grant.is_expired():
                return self._error(rfc8628_errors.ExpiredTokenError())
        return super().device_flow_token_response(request, device_code, *args, **kwargs)

    @staticmethod
    def _error(error):
        return http.HttpResponse(content=error.json, status=error.status_code, content_type="application/json")


class _IDTokenMinter(OpenIDGrantTypeBase):
    """OpenID Connect's `add_id_token`, borrowed for the device grant (no nonce applies)."""

    def __init__(self, target):
        self.proxy_target = target


class OpenIDDeviceCodeGrant(DeviceCodeGrant):
    """oauthlib's device grant, with an ID token in the token response when `openid` was granted."""

    def __init__(self, request_validator=None, **kwargs):
        super().__init__(request_validator, **kwargs)
        self._minter = _IDTokenMinter(self)

    def create_token_response(self, request, token_handler):
        headers = self._get_default_headers()
        try:
            self.validate_token_request(request)
        except rfc6749_errors.OAuth2Error as error:
            headers.update(error.headers)
            return headers, error.json, error.status_code
        token = token_handler.create_token(request, self.refresh_token)
        token = self._minter.add_id_token(token, token_handler, request)
        self.request_validator.save_token(token, request)
        return headers, json.dumps(token), 200


class TestOIDCServer(OpenIDServer):
    """oauthlib's OpenID Connect server with the device grant above."""

    def __init__(self, request_validator, token_expires_in=None, token_generator=None,
                 refresh_token_generator=None, *args, **kwargs):
        super().__init__(request_validator, token_expires_in, token_generator, refresh_token_generator, *args, **kwargs)
        # The same settings as oauthlib's own device grant (DOT's pre-token hook among them).
        self.device_code_grant = OpenIDDeviceCodeGrant(request_validator, **kwargs)
        self._grant_types[DEVICE_GRANT] = self.device_code_grant
