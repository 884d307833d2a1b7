public import Foundation

// MARK: - libFuzzer's driver

#if Fuzzing
    /// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))`, from the
    /// libFuzzer runtime that `-sanitize=fuzzer` links. Declared here rather than in a C module: it is the only C
    /// function the fuzz targets call, and its arguments are plain C types.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func llvmFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// The target being fuzzed; set once before the driver starts, read only by the driver's (single) thread.
    nonisolated(unsafe) private var currentTarget: ((Data) -> [String])?

    /// Runs libFuzzer (its command-line options, corpus directories and all) on `target`, then exits.
    ///
    /// SwiftPM gives a debug executable its own entry point (`<Module>_main`, with `main` pointing at it), so libFuzzer's
    /// own `main` never runs; this calls its driver instead. An input for which `target` reports a broken invariant
    /// stops the run with a crash, so libFuzzer saves it as `crash-…`.
    public func runLibFuzzer(_ target: @escaping @Sendable (Data) -> [String]) -> Never {
        currentTarget = target
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(llvmFuzzerRunDriver(&argc, &argv, fuzzOneInput))
    }

    /// libFuzzer's callback: one input through the current target.
    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
        let data = start.map { Data(bytes: $0, count: count) } ?? Data()
        let broken = currentTarget?(data) ?? []
        if !broken.isEmpty { fatalError("invariant broken: \(broken.joined(separator: "; "))") }
        return 0
    }
#else

    // MARK: - Without the Fuzzing trait: replaying files

    /// Without the `Fuzzing` trait (a plain `swift build`) there is no libFuzzer to drive the target: each file named
    /// on the command line goes through it once, as libFuzzer does with files, and a broken invariant exits 1.
    public func runLibFuzzer(_ target: @escaping @Sendable (Data) -> [String]) -> Never {
        let files = CommandLine.arguments.dropFirst().filter { !$0.hasPrefix("-") }
        guard !files.isEmpty else {
            FileHandle.standardError.write(
                Data("built without the Fuzzing trait: give input files to replay, or run scripts/fuzz\n".utf8))
            exit(64)
        }
        var failed = false
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                FileHandle.standardError.write(Data("cannot read \(file)\n".utf8))
                failed = true
                continue
            }
            let broken = target(data)
            if !broken.isEmpty {
                FileHandle.standardError.write(
                    Data("\(file): invariant broken: \(broken.joined(separator: "; "))\n".utf8))
                failed = true
            }
        }
        exit(failed ? 1 : 0)
    }
#endif
