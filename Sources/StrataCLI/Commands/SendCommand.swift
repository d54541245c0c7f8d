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
            Each non-blank line is a command body, sent exactly as written (so exactly what is signed),
            less its line ending (\\n or \\r\\n) and a byte order mark it starts with:
              {"id":"c-1","type":"RequestLoan","actor":"agent-7","payload":{…}}
            Give every command its own id: sending the file again is then safe, every command being
            answered from the journal as a duplicate rather than applied twice.

            Lines are signed with the key named by --key (or STRATA_KEY), which needs the commands
            scope, else with the key file's first key that has it, and each is sent pipelined as soon as
            it is read, so `tail -f FILE | strata send` works; replies come back in the order sent, one
            JSON line each, on standard output, as they arrive. A line over 1 MiB (1,048,576
            bytes), which the service may drop unanswered, is not sent: in its place comes the service's
            reply to a body too large (TOO_LARGE BODY_TOO_LARGE, no id), and it counts as refused. So
            there is always one reply line per line, in input order.

            When the key file holds the service's CURVE key ("curveServer"), the connection is encrypted
            with CURVE, presenting the key's own CURVE pair, which it must then have.

            Exit codes: 0 every command accepted, 1 at least one refused, 2 usage or environment (input
            that cannot be read, no such key, a key without the commands scope or without a CURVE pair
            the key file asks for, an endpoint that cannot be connected to, no reply within --timeout
            while one is awaited, the connection lost while one is awaited).
            """)

    /// Commands sent ahead of their replies.
    static let window = 1000

    static let subcommand = Subcommand(spec: spec) { arguments, environment in
        let configuration = try Configuration.resolve(arguments, environment: environment)
        let timeoutSeconds = try arguments.integer("timeout", in: 1...86_400) ?? 30
        let signing = try configuration.signingKey(for: .commands)
        let source = arguments.positionals.first ?? "-"
        var bodies = try openInput(source)

        let context = try ZMQContext()
        let client = try connect(context, to: configuration.commandsEndpoint, signing: signing)
        defer { client.close() }

        var refused = 0
        try pipeline(
            &bodies, through: client, timeoutSeconds: timeoutSeconds, endpoint: configuration.commandsEndpoint,
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
                context, endpoint: endpoint, keyId: signing.key.id, secret: signing.key.secret, curve: signing.curve,
                watchingConnections: true)
        } catch {
            throw CommandFailure.environment("cannot connect to the commands endpoint \(endpoint): \(error)")
        }
    }

    /// The largest body sent. The service answers every body up to 1 MiB (TOO_LARGE when over
    /// its limit) but may drop a larger one unanswered; every later reply would then be printed
    /// as the answer to the line before its own.
    static let largestBody = 1024 * 1024

    /// Sends `bodies` pipelined (up to `window` ahead of their replies), each as soon as it is
    /// read, and hands each reply to `onReply`, in the order of `bodies`. A body over
    /// `largestBody` is not sent: its reply, in its place, is the refusal the service gives a body
    /// too large, without an id as the service's has none (it does not read the body).
    ///
    /// `timeoutSeconds` bounds the wait for a reply while one is awaited, not the wait for input;
    /// a body libzmq cannot take yet is awaited too, and nothing is read past it until it is sent.
    /// Input that fails partway is reported once the replies to what was sent have come. A
    /// connection lost while replies are awaited ends it at once, when the client watches its
    /// connections: those replies never come.
    static func pipeline(
        _ bodies: inout some CommandBodies, through client: SignedClient, timeoutSeconds: Int64, endpoint: String,
        curve: Bool = false, onReply: ([UInt8]) -> Void
    ) throws {
        // In the order read: nil for a body sent and awaiting its reply, else the length of a
        // line refused here. The service answers in the order sent.
        var queue: [Int?] = []
        var head = 0
        var answered = 0
        var awaited = 0
        var deadline = ContinuousClock.now
        var inputFailure: CommandFailure?
        // A body libzmq could not take: a DEALER whose handshake failed for good (a key the
        // service refused) has no connection to queue it on, and a send that waited blocked past
        // the time-out, for ever.
        var unsent: [UInt8]?
        // A connection that ended while nothing was awaited lost nothing. The demo sends in
        // phases over one client: a service restarted between them was taken for a connection
        // lost under the next phase, whose commands the new connection carried and the service
        // decided, and the demo ended saying they were unanswered.
        _ = try client.connections?.connectionEnded()
        func passRefusedHere() {
            while head < queue.count, let bytes = queue[head] {
                let error = StrataError(
                    .tooLarge, reason: "BODY_TOO_LARGE",
                    "the body has \(bytes) bytes; strata send sends none over \(largestBody), "
                        + "which the service may drop unanswered")
                onReply(CommandReply.refused(id: nil, duplicate: false, error: error).json)
                head += 1
                answered += 1
            }
            if head > 1024 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
        }
        while true {
            if let body = unsent, try client.send(body, wait: false) { unsent = nil }
            while unsent == nil, awaited < window, let line = bodies.next() {
                switch line {
                case .body(let body):
                    if try !client.send(body, wait: false) { unsent = body }
                    if awaited == 0 { deadline = .now + .seconds(timeoutSeconds) }
                    awaited += 1
                    queue.append(nil)
                case .tooLarge(let bytes):
                    queue.append(bytes)
                }
            }
            passRefusedHere()
            let input = awaited < window && unsent == nil ? bodies.descriptor : nil
            if awaited == 0 && input == nil { break }
            let wait = awaited == 0 ? -1 : max(0, Int((deadline - .now) / .milliseconds(1)) + 1)
            let sockets = [client.socket] + (client.connections.map { [$0.socket] } ?? [])
            let ready = try zmqPollReadable(
                sockets, descriptors: input.map { [$0] } ?? [], orWritable: unsent == nil ? nil : client.socket,
                timeoutMilliseconds: wait)
            func takeReplies() throws {
                while let reply = try client.receive(timeoutMilliseconds: 0) {
                    head += 1
                    answered += 1
                    awaited -= 1
                    onReply(reply)
                    passRefusedHere()
                }
            }
            // Before the replies: libzmq connects again by itself, and the replies on a new
            // connection would be paired with the requests the old one carried, which are never
            // answered. Those that came before it ended are still their requests' replies; a new
            // connection's come only after libzmq's reconnect interval (0.1 s) and a handshake.
            let ended = try client.connections?.connectionEnded() == true
            if ended && awaited > 0 {
                try takeReplies()
                if awaited > 0 {
                    throw CommandFailure.environment(
                        "lost the connection to \(endpoint) (\(answered) answered, \(awaited) awaited): the "
                            + "service stopped or restarted, and may or may not have decided what was awaited; "
                            + "sending the same commands again is safe, each one decided being answered from the "
                            + "journal as a duplicate")
                }
            }
            if input != nil && ready.contains(sockets.count) {
                do throws(CommandFailure) { try bodies.read() } catch { inputFailure = error }
            }
            if ready.contains(0) {
                try takeReplies()
                deadline = .now + .seconds(timeoutSeconds)
            } else if awaited > 0 && ContinuousClock.now >= deadline {
                throw CommandFailure.environment(
                    "no reply from \(endpoint) within \(timeoutSeconds) s (\(answered) answered, \(awaited) awaited): "
                        + why(client.connections?.reach, curve: curve))
            }
        }
        if let inputFailure { throw inputFailure }
    }

    /// Why no reply came, as far as the client's connections tell: each cause has its own
    /// remedy, and a key the service refused is one only the handshake can name (a service not
    /// running was once told to check its key file for the key's "curvePublic").
    static func why(_ reach: ConnectionWatch.Reach?, curve: Bool) -> String {
        switch reach {
        case nil:
            return "is strata serve running?"
        case .noConnection?:
            return "no connection to it could be made; is strata serve running there, and reachable from here?"
        case .connectedWithoutHandshake?:
            return "a connection was made, but no handshake completed on it: the service may be suspended or "
                + "overloaded, or this is not a strata service's commands endpoint"
        case .keyRefused(let status)?:
            return "the service refused this key's CURVE handshake (status \(status)): its key file does not hold "
                + "this key's \"curvePublic\", or did not when this connected (libzmq does not try again)"
        case .handshakeFailed?:
            return curve
                ? "every connection made failed its CURVE handshake; is the key file's \"curveServer\" public key "
                    + "this service's, and does the service run CURVE?"
                : "every connection made failed its handshake; does the service run CURVE (its key file has "
                    + "\"curveServer\": give this key file the service's public key and this key a CURVE pair)?"
        case .established?:
            return "the service took the connection but has not answered (overloaded, or suspended?); "
                + "sending the same commands again is safe"
        }
    }

    /// The input to read lines from: standard input for `-`, else the file, opened now so that
    /// one that cannot be is reported before anything is sent. Read with read(2), since
    /// FileHandle's reading ends the process on an error, such as a directory given as input.
    static func openInput(_ source: String) throws(CommandFailure) -> StreamedBodies {
        if source == "-" {
            if StandardStreams.wasClosed(STDIN_FILENO) {
                throw CommandFailure.environment("cannot read standard input: \(String(cString: strerror(EBADF)))")
            }
            return StreamedBodies(descriptor: STDIN_FILENO, name: "standard input")
        }
        let descriptor = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CommandFailure.environment("cannot read \(source): \(String(cString: strerror(errno)))")
        }
        return StreamedBodies(descriptor: descriptor, name: source)
    }
}
