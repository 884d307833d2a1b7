import Foundation

/// The top-level help: a short lead with the commands to run first, then (after the usage and the list of commands)
/// the reference text — how a stored sign-in is picked, exit statuses, environment variables. The man page has both
/// parts in the configuration's discussion; `--help` moves the reference after the commands so that the usage is
/// on the first screen.
enum RootHelp {
    static let lead = """
        portal-auth opens the system browser for the sign-in page and catches the OAuth redirect on a \
        loopback port, so people and scripts on Linux get tokens for ArcGIS Online, ArcGIS Enterprise, and \
        services behind an Identity-Aware Proxy such as the Microsoft Entra application proxy.

        Examples:
          portal-auth login --portal https://www.arcgis.com --client-id abc123
          portal-auth iap check --config contoso-iap.json
          portal-auth iap login --config contoso-iap.json
          portal-auth status
          portal-auth token --format header
          portal-auth exec -- python3 publish.py

        Run `portal-auth help <command>` (for example `portal-auth help login`) for details.
        """

    /// The first words of the reference text, where `reordered(_:)` cuts the rendered help.
    static let referenceStart = "Commands that pick a stored sign-in"

    static let reference = """
        Commands that pick a stored sign-in (token, refresh, revoke, exec, status) use the only one, or \
        the default set with `portal-auth use`, unless told with --portal, --iap, --url or --name. A \
        custom-scheme redirect URL such as my-maps-app://auth (the SDK's IAP files use them) is received \
        through the desktop's scheme handler: see `portal-auth help register-scheme`.

        Exit status:
          0    success; for status, the sign-in that counts is usable
          1    the answer is no: iap check --url not covered, sign-out declined
          22   request --fail: an HTTP status of 400 or more, or an ArcGIS
               error envelope ({"error": {"code": ...}} in an HTTP 200)
          64   wrong usage; standard input ended at a paste prompt
          65   invalid content (a configuration, the store, a server's answer;
               request: a fresh IAP token refused with 401 or 403 alike)
          66   an input file is missing or unreadable, or another user
               can change it (an IAP configuration others can write)
          69   a server is unavailable, or its answer unusable (a refreshed
               access token that expired as it came is never printed)
          70   an internal or local error
          75   timed out
          77   refused, or a sign-in is needed (also once the refresh token was
               refused: what status says; request: an HTTP 401 or 403 nothing
               answered, a redirect to a sign-in page)
          126  exec: the command cannot be run
          127  exec: the command was not found
          130  interrupted (Ctrl-C)
          With --format json a failure also prints {"error": {"status",
          "category", "message", "command", "alternative_command"}} on stdout.

        Environment:
          PORTAL_AUTH_STORE          auto, keyring, file or a store file (as --store)
          XDG_STATE_HOME, HOME       store file folder (portal-auth/credentials.json)
          DBUS_SESSION_BUS_ADDRESS   the desktop keyring's session bus
          PORTAL_AUTH_CA_BUNDLE      PEM bundle of trusted CAs (then CURL_CA_BUNDLE,
                                     SSL_CERT_FILE)
          PORTAL_AUTH_PROXY_TOKEN    id or access: the token sent to hosts behind an
                                     IAP (as --proxy-token)
          PORTAL_AUTH_CLIENT_SECRET  app-token's client secret when no file is given
          PORTAL_AUTH_LAUNCH_DIR     folder of the browser launch page
          XDG_CACHE_HOME             launch pages without XDG_RUNTIME_DIR
          BROWSER                    the browser command (else xdg-open)
          WSL_DISTRO_NAME            WSL: the Windows browser (wslview, cmd.exe)
          DISPLAY, WAYLAND_DISPLAY,  whether a browser can be shown here
          SSH_CONNECTION, SSH_CLIENT,
          SSH_TTY
          PATH                       browser commands, exec's command
          XDG_RUNTIME_DIR            sockets of custom-scheme sign-ins and of the
                                     agent (portal-auth/agent.sock)
          PORTAL_AUTH_AGENT          the agent's socket for token and exec (off:
                                     never ask an agent)
          LISTEN_FDS, LISTEN_PID,    agent: the listening socket systemd hands over
          LISTEN_FDNAMES             (socket activation)
          PORTAL_AUTH_CONFIRM        agent: the program that confirms a forwarded
                                     request (as --confirm-command)
          XDG_DATA_HOME,             register-scheme's desktop file and
          XDG_CONFIG_HOME            mimeapps.list
          COLUMNS                    width of messages
          PORTAL_AUTH_FAST_PATH      off or only: token and refresh never or always
                                     read by their fast parser (for tests)
          https_proxy, no_proxy      proxies (read by libcurl)

        Files:
          ~/.local/state/portal-auth/credentials.json
                                     the store ($XDG_STATE_HOME/portal-auth; 0600):
                                     the tokens, or with the keyring their index
          credentials.preferences.json
                                     beside the store: the default sign-in, names,
                                     the portal apps signed in to (no token)
          $XDG_RUNTIME_DIR/portal-auth/
                                     browser launch pages, removed after use (else
                                     ~/.cache/portal-auth/launch)

        Set for `portal-auth exec` commands: PORTAL_AUTH_TOKEN and others (see
        `portal-auth help exec`).
        """

    /// `help`, the top-level help as the parser renders it, with the reference text moved after the commands; nil
    /// for any other help (a subcommand's), which is printed as it is.
    static func reordered(_ help: String) -> String? {
        let lines = help.components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix(referenceStart) }),
            let usage = lines.firstIndex(where: { $0.hasPrefix("USAGE: portal-auth <subcommand>") }), start < usage
        else { return nil }
        var body = Array(lines[usage...])
        while body.last?.isEmpty == true { body.removeLast() }
        var seeAlso: [String] = []
        if let last = body.last, last.trimmingCharacters(in: .whitespaces).hasPrefix("See 'portal-auth help") {
            seeAlso = [body.removeLast()]
            while body.last?.isEmpty == true { body.removeLast() }
        }
        var reference = Array(lines[start..<usage])
        while reference.last?.isEmpty == true { reference.removeLast() }
        let head = Array(lines[..<start])
        return (head + body + [""] + reference + (seeAlso.isEmpty ? [] : [""] + seeAlso)).joined(separator: "\n")
    }
}
