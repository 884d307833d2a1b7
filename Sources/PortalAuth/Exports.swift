// The library's lower layers are targets of their own (README, "How it is built"); an app imports only PortalAuth,
// which brings their public API (and, to the package's own targets, their `package` API) with it.
@_exported public import PortalAuthCore
@_exported public import PortalAuthStore
@_exported public import PortalAuthTransport
