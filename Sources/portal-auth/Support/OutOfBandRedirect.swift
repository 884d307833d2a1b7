/// The out-of-band redirect URI an ArcGIS portal accepts for apps registered with it: its page shows the code.
enum OutOfBandRedirect {
    static let uri = "urn:ietf:wg:oauth:2.0:oob"
}
