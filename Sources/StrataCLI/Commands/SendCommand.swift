import Bus
import CommandService
import Foundation
import StrataCore

/// `strata send [FILE|-]`: sign JSON-lines command bodies, send them pipelined over one
/// DEALER, print each reply as a JSON line, in order.
enum SendCommand {
    static let spec = CommandSpec(
        ["send"], summary: "Sign and send JSON-lines commands; print JSON-lines replies.",
        arguments: [ArgumentSpec("FILE", help: "command bodies, one JSON object a line; - or nothing: stdin", optional: true)],
        options: Configuration.options + Configuration.endpointOptions.filter { $0.name == "commands" || $0.name == "key" } + [
            OptionSpec("timeout", value: "SECONDS", help: "How long to wait for each reply (default 30)."),
        ],
        discussion: """
            Each non-blank line is a command body, sent exactly as written (so exactly what is signed):
              {"id":"c-1","type":"RequestLoan","actor":"agent-7","payload":{…}}
            Give every command its own id: sending the file again is then safe, every command being
            answered from the journal as a duplicate rather than applied twice.

            Lines are signed with the key named by --key (or STRATA_KEY), which needs the commands
            scope, else with the key file's first key that has it, and sent pipelined; replies come back
            in the order sent, one JSON line each, on standard output. A line over 1 MiB (1,048,576
            bytes), which the service may drop unanswered, is not sent: in its place comes the service's
            reply to a body too large (TOO_LARGE BODY_TOO_LARGE, no id), and it counts as refused. So
            there is always one reply line per line, in input order.

            When the key file holds the service's CURVE key ("curveServer"), the connection is encrypted
            with CURVE, presenting the key's own CURVE pair, which it must then have.

            Exit codes: 0 every command accepted, 1 at least one refused, 2 usage or environment (input
            that cannot be read, no such key, a key without the commands scope or without a CURVE pair
            the key file asks for, an endpoint that cannot be connected to, no reply within --timeout).
            """)

    /// Commands sent ahead of their replies.
    static let window = 1000

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let timeoutSeconds = try arguments.integer("timeout", in: 1...86_400) ?? 30
        let signing = try configuration.signingKey(for: .commands)
        let source = arguments.positionals.first ?? "-"
        let input: [UInt8]
        if source == "-" {
            input = try readStandardInput()
        } else {
            guard let data = FileManager.default.contents(atPath: source) else {
                throw CommandFailure.environment("cannot read \(source)")
            }
            input = Array(data)
        }
        let bodies = lines(of: input)

        let context = try ZMQContext()
        let client = try connect(context, to: configuration.commandsEndpoint, signing: signing)
        defer { client.close() }

        var refused = 0
        try pipeline(
            bodies, through: client, timeoutSeconds: timeoutSeconds, endpoint: configuration.commandsEndpoint,
            curve: signing.curve != nil
        ) {
            reply in
            if (try? JSONParser.parse(reply))?["ok"] != .bool(true) { refused += 1 }
            write(String(decoding: reply, as: UTF8.self) + "\n", to: .standardOutput)
        }
        return refused == 0 ? 0 : 1
    }

    /// A client on the commands endpoint. libzmq refuses at once an endpoint it cannot read or a
    /// transport it lacks: a setting to fix (exit 2), not a problem the operation found.
    static func connect(_ context: ZMQContext, to endpoint: String, signing: SigningKey) throws(CommandFailure)
        -> SignedClient
    {
        do throws(ZMQError) {
            return try SignedClient(
                context, endpoint: endpoint, keyId: signing.key.id, secret: signing.key.secret, curve: signing.curve)
        } catch {
            throw CommandFailure.environment("cannot connect to the commands endpoint \(endpoint): \(error)")
        }
    }

    /// The largest body sent. The service answers every body up to 1 MiB (TOO_LARGE when over
    /// its limit) but may drop a larger one unanswered; every later reply would then be printed
    /// as the answer to the line before its own.
    static let largestBody = 1024 * 1024

    /// Sends `bodies` pipelined (up to `window` ahead of their replies) and hands each
    /// reply to `onReply`, in the order of `bodies`. A body over `largestBody` is not sent: its
    /// reply, in its place, is the refusal the service gives a body too large, without an id
    /// as the service's has none (it does not read the body).
    static func pipeline(
        _ bodies: [[UInt8]], through client: SignedClient, timeoutSeconds: Int64, endpoint: String, curve: Bool = false,
        onReply: ([UInt8]) -> Void
    ) throws {
        // Bodies sent or refused here, those whose reply was handed on, and those sent whose
        // reply has not come; the service answers in the order sent.
        var sent = 0
        var answered = 0
        var awaited = 0
        func passRefusedHere() {
            while answered < sent, bodies[answered].count > largestBody {
                let error = StrataError(
                    .tooLarge, reason: "BODY_TOO_LARGE",
                    "the body has \(bodies[answered].count) bytes; strata send sends none over \(largestBody), "
                        + "which the service may drop unanswered")
                onReply(CommandReply.refused(id: nil, duplicate: false, error: error).json)
                answered += 1
            }
        }
        while answered < bodies.count {
            while sent < bodies.count && awaited < window {
                if bodies[sent].count <= largestBody {
                    try client.send(bodies[sent])
                    awaited += 1
                }
                sent += 1
            }
            passRefusedHere()
            if answered == bodies.count { break }
            // Wait for one reply, then take every other one already here.
            var reply = try client.receive(timeoutMilliseconds: Int(timeoutSeconds) * 1000)
            guard reply != nil else {
                throw CommandFailure.environment(
                    "no reply from \(endpoint) within \(timeoutSeconds) s "
                        + "(\(answered) of \(bodies.count) answered); is strata serve running"
                        + (curve ? ", and does its key file hold this key's \"curvePublic\"?" : "?"))
            }
            while let current = reply {
                answered += 1
                awaited -= 1
                onReply(current)
                passRefusedHere()
                reply = try client.receive(timeoutMilliseconds: 0)
            }
        }
    }

    /// Standard input to its end. Read with read(2), since FileHandle's reading ends the process
    /// on an error, such as a closed descriptor or a directory given as input.
    static func readStandardInput() throws(CommandFailure) -> [UInt8] {
        if StandardStreams.wasClosed(STDIN_FILENO) {
            throw CommandFailure.environment("cannot read standard input: \(String(cString: strerror(EBADF)))")
        }
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count > 0 {
                input += buffer[..<count]
            } else if count == 0 {
                return input
            } else if errno != EINTR {
                throw CommandFailure.environment("cannot read standard input: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// The non-blank lines, without their line endings.
    static func lines(of bytes: [UInt8]) -> [[UInt8]] {
        bytes.split(separator: UInt8(ascii: "\n")).map { line in
            Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...])
        }.filter { line in !line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }
    }
}
