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
