import Foundation
import Testing
@testable import PortalAuth
@testable import PortalAuthCore

@Suite("JSON through jansson")
struct JSONValueTests {
    @Test("parses objects in document order")
    func parsesInOrder() throws {
        let value = try JSONValue.parse(#"{"b": 1, "a": [true, null, 2.5, "x"]}"#)
        #expect(value.objectValue?.keys == ["b", "a"])
        #expect(value["b"] == .integer(1))
        #expect(value["a"] == .array([.bool(true), .null, .number(2.5), .string("x")]))
    }

    @Test("rejects duplicate keys with a position")
    func rejectsDuplicates() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse("{\"a\": 1,\n \"a\": 2}") }
        do {
            _ = try JSONValue.parse("{\"a\": 1,\n \"a\": 2}")
        } catch {
            #expect(error.line == 2)
            #expect(error.message.contains("duplicate"))
        }
    }

    @Test("reports line and column of a syntax error")
    func syntaxPosition() {
        do {
            _ = try JSONValue.parse("{\n  \"a\": 1,\n  \"b\" 2\n}")
            Issue.record("expected a syntax error")
        } catch {
            #expect(error.line == 3)
            #expect(error.column > 0)
        }
    }

    @Test("rejects invalid UTF-8 and empty input")
    func rejectsBadBytes() {
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Data([0x22, 0xFF, 0x22])) }
        #expect(throws: JSONSyntaxError.self) { try JSONValue.parse(Data()) }
    }

    @Test("round-trips through serialisation")
    func roundTrip() throws {
        let value: JSONValue = .object(["z": .string("é\"\\\n"), "n": .integer(-3), "list": .array([.number(0.5)])])
        #expect(try JSONValue.parse(value.serialized()) == value)
        #expect(try JSONValue.parse(value.serialized(indent: 2)) == value)
    }

    @Test(
        "C0, DEL, C1, line separators and bidirectional controls are written escaped, in keys and values; read back the same",
        arguments: [
            0x1B, 0x7F, 0x80, 0x85, 0x9B, 0x9F, 0x61C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A, 0x202E, 0x2066, 0x2069,
        ]
            as [UInt32])
    func controlsEscaped(code: UInt32) throws {
        let control = String(Unicode.Scalar(code)!)
        let value: JSONValue = .object([
            "sub\(control)": .string("alice\(control)[31m é ✓"), "list": .array([.string(control)]),
        ])
        for indent in [0, 2] {
            let text = value.serialized(indent: indent)
            #expect(!text.unicodeScalars.contains(Unicode.Scalar(code)!), "raw U+\(String(code, radix: 16)) in \(text)")
            #expect(text.contains(String(format: "\\u%04X", code)), "\(text)")
            // Letters beyond ASCII stay as they are.
            #expect(text.contains("é ✓"), "\(text)")
            #expect(try JSONValue.parse(text) == value)
        }
    }
}
