from oauth2_provider.oauth2_validators import OAuth2Validator

from .runtime import request_context


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
