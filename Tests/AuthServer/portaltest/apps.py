from django.apps import AppConfig


class PortalTestConfig(AppConfig):
    name = "portaltest"
    verbose_name = "PortalAuth test server"
    default_auto_field = "django.db.models.BigAutoField"
