import Dispatch
import Foundation

/// The `main` of a fuzz program: `PROGRAM TARGET [ARGUMENTS…]`. Built by `scripts/fuzz` (with `-DFUZZING`, coverage
/// and AddressSanitizer), it runs libFuzzer on TARGET with libFuzzer's ARGUMENTS (corpus directories, `-runs=N`,
/// `-max_total_time=S`…). Built plainly, it feeds TARGET each file named (or in each directory named) once and prints
/// what it made of it; `PROGRAM TARGET --write-made-inputs DIRECTORY` writes the target's made inputs as seeds.
public enum FuzzDriver {
    /// Runs the program for the targets of `Target`.
    public static func main<Target: Fuzzable>(_: Target.Type) {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = Target(rawValue: arguments[1]) else {
            let names = Target.allCases.map(\.rawValue).joined(separator: ", ")
            fail("usage: \(arguments[0]) TARGET [ARGUMENTS…]; targets: \(names)", status: 64)
        }
        #if FUZZING
        selected = { input in _ = runToEnd { await target.run(input) } }
        fuzz()
        #else
        if arguments.count == 4, arguments[2] == "--write-made-inputs" {
            let made = runToEnd { () async -> Result<[Data], any Error> in
                do { return .success(try await target.madeInputs()) } catch { return .failure(error) }
            }
            do {
                for (index, input) in try made.get().enumerated() {
                    try input.write(to: URL(fileURLWithPath: arguments[3]).appendingPathComponent("valid-made-\(index)"))
                }
            } catch {
                fail("\(arguments[0]): \(error)", status: 70)
            }
            return
        }
        for path in arguments.dropFirst(2) {
            for file in files(at: path) {
                guard let input = FileManager.default.contents(atPath: file) else { continue }
                print("\(runToEnd { await target.run(input) } == .accepted ? "accepted" : "refused") \(file)")
            }
        }
        #endif
    }

    /// Runs `body` to its end on this thread (the main thread: nothing else runs on it) and returns its value.
    private static func runToEnd<Value: Sendable>(_ body: @escaping @Sendable () async -> Value) -> Value {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var value: Value?
        Task.detached {
            value = await body()
            done.signal()
        }
        done.wait()
        return value!
    }

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(status)
    }

    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
    }

    #if FUZZING
    /// Feeds one input to the selected target: what libFuzzer's callback calls.
    nonisolated(unsafe) fileprivate static var selected: ((Data) -> Void)?

    /// Hands the process to libFuzzer, which sees the arguments after TARGET, under the program's name.
    private static func fuzz() -> Never {
        let count = Int(CommandLine.argc) - 1
        let argv = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: count + 1)
        argv[0] = CommandLine.unsafeArgv[0]
        for index in 2..<Int(CommandLine.argc) { argv[index - 1] = CommandLine.unsafeArgv[index] }
        argv[count] = nil
        var argc = Int32(count)
        var arguments = argv
        exit(LLVMFuzzerRunDriver(&argc, &arguments, fuzzOne))
    }
    #endif
}

#if FUZZING
/// libFuzzer's callback: one input for the selected target.
private func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzDriver.selected!(data.map { Data(bytes: $0, count: size) } ?? Data())
    return 0
}

/// libFuzzer's entry when the program has its own `main` (linked from `libclang_rt.fuzzer_no_main`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
