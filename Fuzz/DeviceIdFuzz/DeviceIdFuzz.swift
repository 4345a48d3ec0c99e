import Dispatch
import Foundation
import FuzzTargets

/// `DeviceIdFuzz TARGET [ARGUMENTS…]`. Built by `scripts/fuzz` (with `-DFUZZING`, coverage and AddressSanitizer),
/// it runs libFuzzer on TARGET with libFuzzer's ARGUMENTS (corpus directories, `-runs=N`, `-max_total_time=S`…).
/// Built plainly, it feeds TARGET each file named (or in each directory named) once and prints what it made of it.
@main
struct DeviceIdFuzz {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: DeviceIdFuzz TARGET [ARGUMENTS…]; targets: \(names)\n".utf8))
            exit(64)
        }
        selected = target
        #if FUZZING
        fuzz()
        #else
        if arguments.count == 4, arguments[2] == "--write-made-inputs" {
            return writeMadeInputs(target, to: arguments[3])
        }
        for path in arguments.dropFirst(2) {
            for file in files(at: path) {
                guard let input = FileManager.default.contents(atPath: file) else { continue }
                print("\(run(target, input) == .accepted ? "accepted" : "refused") \(file)")
            }
        }
        #endif
    }

    #if FUZZING
    /// Hands the process to libFuzzer, which sees the arguments after TARGET, under the program's name.
    static func fuzz() -> Never {
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

    /// The target libFuzzer's callback feeds.
    nonisolated(unsafe) static var selected: FuzzTarget?

    /// Runs the asynchronous target to its end on this thread (the main thread: nothing else runs on it).
    static func run(_ target: FuzzTarget, _ input: Data) -> FuzzTarget.Outcome {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome = FuzzTarget.Outcome.refused
        Task.detached {
            outcome = await target.run(input)
            done.signal()
        }
        done.wait()
        return outcome
    }

    /// `DeviceIdFuzz TARGET --write-made-inputs DIRECTORY`: writes the target's ``FuzzTarget/madeInputs()`` as seeds.
    static func writeMadeInputs(_ target: FuzzTarget, to directory: String) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            do {
                for (index, input) in try await target.madeInputs().enumerated() {
                    try input.write(to: URL(fileURLWithPath: directory).appendingPathComponent("valid-made-\(index)"))
                }
            } catch {
                FileHandle.standardError.write(Data("DeviceIdFuzz: \(error)\n".utf8))
                exit(70)
            }
            done.signal()
        }
        done.wait()
    }

    static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted().map { path + "/" + $0 }
    }
}

#if FUZZING
/// libFuzzer's callback: one input for the selected target.
private func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    _ = DeviceIdFuzz.run(DeviceIdFuzz.selected!, data.map { Data(bytes: $0, count: size) } ?? Data())
    return 0
}

/// libFuzzer's entry when the program has its own `main` (linked from `libclang_rt.fuzzer_no_main`).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32
#endif
