/// `strata demo` (filled in below).
enum DemoCommand {
    static let spec = CommandSpec(["demo"], summary: "Drive a month of lending and invoicing through the running system.")
    static let subcommand = Subcommand(spec: spec) { _, _ in 0 }
}
