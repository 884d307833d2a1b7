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
}
