import Foundation
import Testing
import FuzzChecks

/// One committed input of a fuzz target: a seed, or a regression saved from a crash.
struct FuzzInput: Sendable, CustomTestStringConvertible {
    let target: String
    /// The path under `Fixtures/`.
    let path: String

    var testDescription: String { path }
}

/// Replays every seed and regression of every fuzz target (`Fixtures/fuzz/<target>/{seeds,regressions}/`) on each
/// `swift test`, through the same entry points the libFuzzer executables call (`scripts/fuzz`).
@Suite("Fuzz corpus replay")
struct FuzzReplayTests {
    static let fuzzRoot = FixtureFiles.root.appendingPathComponent("fuzz")

    /// The folders holding a target's committed inputs; the IAP loader also replays the `Fixtures/iap/` files.
    static func folders(of target: String) -> [String] {
        ["fuzz/\(target)/seeds", "fuzz/\(target)/regressions"] + (target == "iap-configuration" ? ["iap"] : [])
    }

    static let inputs: [FuzzInput] = FuzzEntryPoints.targets.keys.sorted().flatMap { target in
        folders(of: target).flatMap { folder in
            let directory = FixtureFiles.root.appendingPathComponent(folder)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
            return names.sorted().map { FuzzInput(target: target, path: "\(folder)/\($0)") }
        }
    }

    @Test("a committed input breaks no invariant and does not crash", arguments: inputs)
    func replay(_ input: FuzzInput) throws {
        let data = try Data(contentsOf: FixtureFiles.root.appendingPathComponent(input.path))
        let target = try #require(FuzzEntryPoints.targets[input.target])
        let broken = target(data)
        #expect(broken.isEmpty, "\(input.path): \(broken.joined(separator: "; "))")
    }

    @Test("every target has seeds, and every folder under Fixtures/fuzz/ is a target")
    func layout() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.fuzzRoot.path).filter {
            !$0.hasPrefix(".")
        }
        #expect(Set(folders) == Set(FuzzEntryPoints.targets.keys))
        for target in FuzzEntryPoints.targets.keys {
            #expect(
                Self.inputs.contains { $0.target == target && $0.path.contains("/seeds/") }, "\(target) has no seeds")
        }
    }
}
