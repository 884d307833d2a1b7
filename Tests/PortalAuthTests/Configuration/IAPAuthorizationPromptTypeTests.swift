import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthStore

@Suite("Authorization prompt types")
struct IAPAuthorizationPromptTypeTests {
    static let table: [(type: IAPAuthorizationPromptType, json: String, prompt: String?)] = [
        (.unspecified, "", nil),
        (.none, "none", "none"),
        (.login, "login", "login"),
        (.consent, "consent", "consent"),
        (.selectAccount, "select_account", "select_account"),
    ]

    @Test("maps JSON values and the prompt parameter", arguments: table)
    func mapping(type: IAPAuthorizationPromptType, json: String, prompt: String?) throws {
        #expect(type.rawValue == json)
        #expect(IAPAuthorizationPromptType(rawValue: json) == type)
        #expect(type.promptParameter == prompt)
        let text = FixtureFiles.iapJSON(replacing: ["authorization_prompt_type": "\"\(json)\""])
        let report = IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/tmp/p.json"))
        #expect(try #require(report.configuration).authorizationPromptType == type)
    }

    @Test("has exactly five cases")
    func cases() {
        #expect(IAPAuthorizationPromptType.allCases.count == 5)
        #expect(IAPAuthorizationPromptType.allowedValueList == #""", "none", "login", "consent", "select_account""#)
    }

    @Test("an absent key means unspecified")
    func absent() throws {
        let text = FixtureFiles.iapJSON(replacing: ["authorization_prompt_type": nil])
        let report = IAPConfiguration.report(parsing: Data(text.utf8), file: URL(fileURLWithPath: "/tmp/p.json"))
        #expect(try #require(report.configuration).authorizationPromptType == .unspecified)
    }

    @Test("values are case-sensitive", arguments: ["None", "LOGIN", "select-account", "selectAccount", " "])
    func unknown(value: String) {
        #expect(IAPAuthorizationPromptType(rawValue: value) == nil)
    }
}
