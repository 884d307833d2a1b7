from oauth2_provider.oauth2_validators import OAuth2Validator

from .runtime import current_request, request_context


class TestOAuth2Validator(OAuth2Validator):
    """DOT's validator plus: the portal face decides per request whether the refresh
    token rotates (ArcGIS keeps it on refresh_token, replaces it on
    exchange_refresh_token), and standard profile claims in ID tokens / userinfo."""

    def rotate_refresh_token(self, request):
        context = request_context.get()
        if context is not None and context.get("rotate") is not None:
            return bool(context["rotate"])
        return super().rotate_refresh_token(request)

    def get_additional_claims(self):
        return {
            "preferred_username": lambda r: r.user.username,
            "name": lambda r: r.user.get_full_name() or r.user.username,
            "given_name": lambda r: r.user.first_name,
            "family_name": lambda r: r.user.last_name,
            "email": lambda r: r.user.email,
        }

    # OIDC prompt=none (DOT leaves these to the project). Without a browser session:
    # login_required. With one: consent_required, since this server always asks for
    # consent (REQUEST_APPROVAL_PROMPT "force").
    def validate_silent_login(self, request):
        django_request = current_request.get()
        user = getattr(django_request, "user", None)
        return bool(user is not None and user.is_authenticated)

    def validate_silent_authorization(self, request):
        return False

    # The device authorization grant (RFC 8628). DOT 3.4 lets an application have one grant
    # type; the test client signs in with the authorization code and with the device code.
    DEVICE_CLIENTS = {"portal-auth-test"}

    def validate_grant_type(self, client_id, grant_type, client, request, *args, **kwargs):
        if grant_type == "urn:ietf:params:oauth:grant-type:device_code" and client_id in self.DEVICE_CLIENTS:
            return True
        return super().validate_grant_type(client_id, grant_type, client, request, *args, **kwargs)

    def validate_device_code(self, client_id, code, request, *args, **kwargs):
        """oauthlib 4 asks the validator for the device grant's state (DOT 3.4 does not answer)."""
        from oauth2_provider.models import get_device_grant_model

        grant = get_device_grant_model().objects.filter(device_code=code, client_id=client_id).first()
        if grant is None:
            return None
        if grant.status == grant.AUTHORIZATION_PENDING and grant.is_expired():
            return "expired_token"
        if grant.status == grant.AUTHORIZED:
            request.user = grant.user
            request.scopes = grant.scope.split() if grant.scope else []
            return "authorized"
        return {grant.DENIED: "access_denied", grant.EXPIRED: "expired_token"}.get(grant.status, "authorization_pending")
