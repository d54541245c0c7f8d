import Foundation
import StrataCLI

// The executable stays thin: everything lives in StrataCLI, where tests reach it.
AllocatorTuning.apply()
exit(StrataCommandLine.main(Array(CommandLine.arguments.dropFirst())))
