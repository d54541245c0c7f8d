import Foundation
import Synchronization

#if STRATA_FUZZ
    import CLibFuzzer
#endif

/// `StrataFuzz TARGET …`, in two builds. The fuzzing build (`-D STRATA_FUZZ
/// -sanitize=fuzzer`, made by scripts/fuzz) hands the rest of the arguments to libFuzzer's
/// driver: a corpus directory and its options (`-max_total_time=60`). The plain build
/// replays files: `StrataFuzz TARGET FILE|DIR…` runs each through the target once.
@main
struct FuzzMain {
    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count > 2, let target = FuzzTarget(rawValue: arguments[1]) else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: StrataFuzz \(names) FILE|DIR…\n".utf8))
            exit(2)
        }
        #if STRATA_FUZZ
            exit(fuzz(target))
        #else
            replay(target, paths: Array(arguments.dropFirst(2)))
        #endif
    }

    #if STRATA_FUZZ
        /// The target libFuzzer's callback runs: set once, before the driver starts.
        static let selected = Atomic<Int>(0)

        static func fuzz(_ target: FuzzTarget) -> Int32 {
            selected.store(FuzzTarget.allCases.firstIndex(of: target) ?? 0, ordering: .relaxed)
            // libFuzzer reads argv as its own command line: the program name, then its arguments.
            var pointers = [CommandLine.unsafeArgv[0]] + (2..<Int(CommandLine.argc)).map { CommandLine.unsafeArgv[$0] }
            pointers.append(nil)
            var argc = Int32(pointers.count - 1)
            return pointers.withUnsafeMutableBufferPointer { buffer in
                var argv = buffer.baseAddress
                return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                    let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
                    FuzzTarget.allCases[FuzzMain.selected.load(ordering: .relaxed)].run(input)
                    return 0
                }
            }
        }
    #else
        static func replay(_ target: FuzzTarget, paths: [String]) {
            var files: [String] = []
            for path in paths {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
                    FileHandle.standardError.write(Data("StrataFuzz: no file \(path)\n".utf8))
                    exit(2)
                }
                if isDirectory.boolValue {
                    let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
                    files += names.filter { !$0.hasPrefix(".") }.sorted().map { path + "/" + $0 }
                } else {
                    files.append(path)
                }
            }
            for file in files {
                guard let bytes = FileManager.default.contents(atPath: file) else {
                    FileHandle.standardError.write(Data("StrataFuzz: cannot read \(file)\n".utf8))
                    exit(2)
                }
                target.run(Array(bytes))
            }
            print("\(target.rawValue): \(files.count) inputs, no failures")
        }
    #endif
}
