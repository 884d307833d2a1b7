import Foundation

/// What to do about the Microsoft Entra ID errors people meet, by their AADSTS code: the admin setting or the user
/// action that fixes each (MicrosoftDocs/entra-docs `docs/identity-platform/reference-error-codes.md`, whose table
/// names the codes; the settings are those of the app registration's "Authentication" page,
/// `msal-client-application-configuration.md` and `scenario-desktop-app-registration.md`).
///
/// Entra's error answers put the code first in `error_description` (`AADSTS7000218: The request body must contain…`,
/// then a CRLF trailer with trace and correlation IDs) and in `error_codes`. The advice names no token, code or
/// verifier; the provider's own text is shown beside it, neutralised, by the caller.
enum EntraErrorAdvice {
    /// The AADSTS code a description starts with (`AADSTS50011: …` → 50011), or nil.
    static func code(in description: String?) -> Int? {
        guard let description else { return nil }
        let trimmed = description.drop { $0 == " " }
        guard trimmed.hasPrefix("AADSTS") else { return nil }
        let digits = trimmed.dropFirst("AADSTS".count).prefix { $0.isASCII && $0.isNumber }
        return digits.count >= 5 && digits.count <= 8 ? Int(digits) : nil
    }

    /// The fix for `code`, or nil when it is not one this table knows.
    static func advice(for code: Int) -> String? {
        switch code {
        case 7_000_218:
            return
                "Microsoft Entra treats the app as a confidential client (AADSTS7000218): an administrator of the app "
                + "registration "
                + "sets Authentication > Advanced settings > \"Allow public client flows\" to Yes, and registers the redirect "
                + "URL under the \"Mobile and desktop applications\" platform (not \"Web\")."
        case 50011:
            return
                "The redirect URL is not registered for the app (AADSTS50011): an administrator adds it under the app "
                + "registration's "
                + "Authentication > \"Mobile and desktop applications\" (http://localhost with the same path; Entra accepts any "
                + "port on localhost, not [::1])."
        case 700_016:
            return "The app is not known in this tenant (AADSTS700016): check the client_id and the tenant in the "
                + "authorize_url, or have an administrator of that tenant add the app (register it there, or consent to it "
                + "as an enterprise application)."
        case 65001:
            return
                "Nobody has consented to the app's permissions (AADSTS65001): sign in again in the browser and accept, or "
                + "have an administrator grant admin consent (app registration > API permissions > \"Grant admin consent\")."
        case 50076:
            return
                "Microsoft Entra requires multi-factor authentication for this access (AADSTS50076): sign in again in the "
                + "browser and complete it (IAPCredential.credential(for:settings:replacing:))."
        case 50079:
            return
                "The user must register for multi-factor authentication (AADSTS50079): sign in again in the browser and "
                + "complete the registration (IAPCredential.credential(for:settings:replacing:))."
        case 700_082:
            return "The sign-in expired after a long time unused (AADSTS700082, refresh token inactive): sign in again "
                + "(IAPCredential.credential(for:settings:replacing:))."
        case 50173:
            return
                "The sign-in was ended by a change of the account (AADSTS50173, for example a new password, or the admin "
                + "revoked its sessions): sign in again (IAPCredential.credential(for:settings:replacing:))."
        case 53003:
            return
                "A Conditional Access policy of the tenant blocks this sign-in (AADSTS53003): an administrator finds "
                + "which in the Entra admin center's sign-in logs (the Conditional Access tab); the user may need a "
                + "compliant device, another network or another client."
        case 90002:
            return
                "The tenant in the authorize_url does not exist (AADSTS90002): check its ID or domain, and the cloud "
                + "(login.microsoftonline.com, login.microsoftonline.us, login.partner.microsoftonline.cn)."
        default:
            return nil
        }
    }

    /// The fix for the AADSTS code `description` starts with, or nil.
    static func advice(forDescription description: String?) -> String? {
        code(in: description).flatMap(advice(for:))
    }
}
