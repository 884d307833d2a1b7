from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from portaltest import device, iap, pages, portal, testctl

rest = "arcgis/sharing/rest/"

urlpatterns = [
    path("", pages.index, name="index"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(next_page="/"), name="logout"),
    # OIDC / OAuth 2 face: django-oauth-toolkit as shipped, with the device grant's additions
    # (portaltest/device.py) in front of its discovery document and token endpoint.
    re_path(r"^o/\.well-known/openid-configuration/?$", device.discovery, name="oidc-discovery-with-device"),
    path("o/token/", device.DeviceTokenView.as_view(), name="token-with-device"),
    path("o/device-authorization/", device.TestDeviceAuthorizationView.as_view(), name="device-authorization-oauthlib4"),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    # ArcGIS portal face.
    re_path(rf"^{rest}oauth2/authorize/?$", portal.PortalAuthorizationView.as_view(), name="portal-authorize"),
    re_path(r"^arcgis/sharing/oauth2/approval/?$", portal.out_of_band_approval, name="portal-oob-approval"),
    re_path(rf"^{rest}oauth2/token/?$", portal.PortalTokenView.as_view(), name="portal-token"),
    re_path(rf"^{rest}oauth2/revokeToken/?$", portal.PortalRevokeTokenView.as_view(), name="portal-revoke"),
    re_path(rf"^{rest}generateToken/?$", portal.GenerateTokenView.as_view(), name="portal-generate-token"),
    re_path(rf"^{rest}portals/self/?$", portal.portals_self, name="portal-self"),
    re_path(rf"^{rest}info/?$", portal.sharing_info, name="portal-sharing-info"),
    re_path(r"^arcgis/rest/info/?$", portal.rest_info, name="server-info"),
    re_path(r"^arcgis/rest/services/?$", portal.rest_services, name="server-services"),
    re_path(r"^arcgis/rest/services/(?P<path>.+)$", portal.rest_services, name="server-service"),
    # A stand-alone ArcGIS Server (no owning portal): token authentication only, the SDK's `.token` challenge.
    re_path(r"^standalone/rest/info/?$", portal.standalone_rest_info, name="standalone-info"),
    re_path(r"^standalone/rest/services/?$", portal.rest_services, name="standalone-services"),
    # An application behind an identity-aware proxy.
    re_path(r"^iap/app/(?P<path>.*)$", iap.iap_app, name="iap-app"),
    # Test control.
    path("testctl/health", testctl.health),
    path("testctl/stats", testctl.stats),
    path("testctl/reset-stats", testctl.reset_stats),
    path("testctl/expire-access-tokens", testctl.expire_access_tokens),
    path("testctl/expire-refresh-tokens", testctl.expire_refresh_tokens),
    path("testctl/config", testctl.config),
    path("testctl/expire-device-grants", testctl.expire_device_grants),
    path("testctl/tokens", testctl.tokens),
]
