import Bus
import CommandService
import Foundation
import StrataCore
import StrataTesting
import Testing
import Workloads

/// `strata up` as a supervisor: however it ends, its children end with it; a child stopped on
/// purpose stays down; one that cannot be started is tried again; a signal sent while a
/// process starts is never lost.
@Suite struct SupervisorTests {
    /// SIGKILL leaves `up` no chance to stop anything: the kernel tells each child instead
    /// (`SupervisedChild`), and each stops gracefully, releasing the store and the ports.
    @Test func anUpKilledOutrightTakesItsChildrenWithIt() throws {
        try withUp { up, data, children in
            up.send(signal: SIGKILL)
            #expect(up.waitForExit(timeout: 10) == SIGKILL)
            for (name, pid) in children {
                #expect(waitUntilGone(pid, seconds: 20), "\(name) (pid \(pid)) still runs after up was killed")
            }
            // The store's writer lock is free again.
            let bootstrap = try ChildProcess.strata(
                ["admin", "bootstrap", "--data", data.path, "--id", "root", "--username", "root",
                 "--email", "root@example.com"])
            #expect(!bootstrap.stderr.contains("is writing to"), "\(bootstrap.stderr)")
        }
    }

    /// A hung-up terminal (SIGHUP) stops `up` as Ctrl-C does: each child asked, exit 0.
    @Test func aHangUpStopsEveryChildGracefully() throws {
        try withUp { up, _, children in
            up.send(signal: SIGHUP)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
            for (name, pid) in children {
                #expect(up.log.contains("up: \(name) stopped (exit code 0)"), "\(up.log)")
                #expect(waitUntilGone(pid, seconds: 1))
            }
        }
    }

    /// Started under `nohup` (SIGHUP ignored), `up` keeps ignoring it: the hang-up of the terminal
    /// it was started from leaves every process running. The signal, blocked and so kept pending
    /// whatever its action, was read by the listener, and stopped the whole system.
    @Test func anUpStartedUnderNohupRunsOnAfterAHangUp() throws {
        let data = try ChildProcess.temporaryDirectory("strata-up-nohup")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let endpoints = try ["commands", "events", "history"].flatMap {
            ["--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())"]
        }
        let up = try StrataProcess(
            [ChildProcess.product("strata").path, "up", "--data", data.path, "--key", ServiceProcess.Keys.service]
                + endpoints,
            executable: URL(fileURLWithPath: "/usr/bin/nohup"))
        defer { up.stop() }
        for name in ["serve", "project-readmodels", "project-audit"] {
            try up.waitForLine(containing: "\(name): ready ")
        }
        up.send(signal: SIGHUP)
        #expect(up.waitForExit(timeout: 3) == nil, "\(up.log)")
        #expect(!up.log.contains("stopping (signal \(SIGHUP))"), "\(up.log)")
        up.send(signal: SIGTERM)
        #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        for name in ["serve", "readmodels", "audit"] {
            #expect(up.log.contains("up: \(name) stopped (exit code 0)"), "\(up.log)")
        }
    }

    /// A second signal while the children stop: each is killed at once and reaped, then `up`
    /// exits 130; none is left running without it.
    @Test func aSecondSignalKillsEveryChildBeforeUpExits() throws {
        try withUp { up, _, children in
            // Two different signals: two of the same may merge into one while pending.
            up.send(signal: SIGINT)
            up.send(signal: SIGTERM)
            #expect(up.waitForExit(timeout: 30) == 130, "\(up.log)")
            for (name, pid) in children {
                #expect(waitUntilGone(pid, seconds: 1), "\(name) (pid \(pid)) outlived up")
            }
        }
    }

    /// A child stopped by someone (exit code 0, not asked by `up`) is not a crash: it stays down.
    @Test func aChildStoppedOnPurposeStaysDown() throws {
        try withUp { up, _, children in
            let readmodels = try #require(children["readmodels"])
            kill(readmodels, SIGTERM)
            try up.waitForLine(containing: "readmodels stopped on its own (exit code 0) and stays down")
            usleep(1_500_000)
            #expect(up.log.components(separatedBy: "started readmodels (pid ").count == 2, "\(up.log)")
            #expect(!up.log.contains("crashed"), "\(up.log)")
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        }
    }

    /// A child suspended (SIGSTOP) when `up` is asked to stop is woken to
    /// take its SIGTERM and stops gracefully: the signal waited for a SIGCONT that never came,
    /// `up` killed the child after 20 s (serve without signing its head) and exited 1.
    @Test func aSuspendedChildIsWokenToStopGracefully() throws {
        try withUp { up, _, children in
            let serve = try #require(children["serve"])
            kill(serve, SIGSTOP)
            let asked = Date()
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
            // Well within the 20 s after which `up` kills a child that did not stop.
            #expect(Date().timeIntervalSince(asked) < 10, "\(up.log)")
            #expect(up.log.contains("up: serve stopped (exit code 0)"), "\(up.log)")
            #expect(!up.log.contains("did not stop in time"), "\(up.log)")
        }
    }

    /// A second `up` whose ports another system's service holds: its serve cannot bind them,
    /// and no projector of it is started. Started with serve, they reached that service, signed
    /// with the key file both share, and filled this data directory's files with its history, so
    /// that the next `up` here found them ahead of the store and refused them.
    @Test func anUpWhoseServiceCannotBindStartsNoProjector() throws {
        let other = try ChildProcess.temporaryDirectory("strata-up-other")
        defer { try? FileManager.default.removeItem(at: other) }
        try ServiceProcess.prepare(other)
        let service = try ServiceProcess(dataDirectory: other, ports: try .free())
        defer { service.stop() }
        let registrations = (1...5).map { index in
            #"{"id":"o-\#(index)","type":"RegisterUser","actor":"agent-\#(index)","#
                + #""payload":{"userId":"agent-\#(index)","username":"agent\#(index)","#
                + #""email":"agent\#(index)@example.com","role":"AGENT"}}"#
        }
        let sent = try ChildProcess.strata(
            ["send", "-", "--data", other.path, "--key", ServiceProcess.Keys.service, "--commands", service.commands],
            stdin: registrations.joined(separator: "\n") + "\n")
        #expect(sent.exitCode == 0, "\(sent.stdout)\(sent.stderr)")
        let otherHead = try service.store().head()

        let data = try ChildProcess.temporaryDirectory("strata-up-taken")
        defer { try? FileManager.default.removeItem(at: data) }
        let bootstrap = try ChildProcess.strata(
            ["admin", "bootstrap", "--data", data.path, "--id", "root", "--username", "root", "--email",
             "root@example.com"])
        #expect(bootstrap.exitCode == 0, "\(bootstrap.stderr)")
        let up = try StrataProcess(
            ["up", "--data", data.path, "--keys", other.appendingPathComponent("keys.json").path, "--key",
             ServiceProcess.Keys.service, "--commands", service.commands, "--events", service.events, "--history",
             service.history])
        defer { up.stop() }
        #expect(up.waitForExit(timeout: 60) == 1, "\(up.log)")
        #expect(up.log.contains("serve stopped on its own (exit code 2) before it was ready"), "\(up.log)")
        #expect(!up.log.contains("started readmodels") && !up.log.contains("started audit"), "\(up.log)")

        // Nothing of the other store here: no projection file, nothing ahead of this head.
        let status = try ChildProcess.strata(["status", "--format", "json", "--data", data.path])
        let json = try JSONParser.parse(status.stdout)
        #expect(status.exitCode == 0, "\(status.stdout)\(status.stderr)")
        #expect(json["errors"] == [:] && json["projections"] == [:], "\(status.stdout)")
        #expect(try #require(json["head"]?.integerValue) < otherHead)
        for name in ["readmodels.db", "audit.db"] {
            #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent(name).path))
        }
    }

    /// The projectors start only once serve has said it is ready, its endpoints bound.
    @Test func theProjectorsStartOnceServeIsReady() throws {
        try withUp { up, _, _ in
            let log = up.log
            let ready = try #require(log.range(of: "serve: ready "), "\(log)")
            let told = try #require(log.range(of: "up: serve is ready"), "\(log)")
            for name in ["readmodels", "audit"] {
                let started = try #require(log.range(of: "started \(name) (pid "), "\(log)")
                #expect(ready.lowerBound < started.lowerBound && told.lowerBound < started.lowerBound, "\(log)")
            }
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        }
    }

    /// serve stopped on purpose (a SIGTERM sent to it alone, exit 0) stops the others, and `up`
    /// has stopped cleanly: exit 0, as its help says, which said exit 1 and left out SIGHUP, the
    /// 60 s after which a crash waits 1 s again, and exit 130.
    @Test func aServiceStoppedOnPurposeStopsEverythingAndUpExitsZero() throws {
        try withUp { up, _, children in
            kill(try #require(children["serve"]), SIGTERM)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
            #expect(up.log.contains("serve stopped on its own (exit code 0), stopping everything"), "\(up.log)")
            for name in ["readmodels", "audit"] {
                #expect(up.log.contains("up: \(name) stopped (exit code 0)"), "\(up.log)")
            }
        }
        let help = try ChildProcess.strata(["up", "--help"])
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(!text.contains("the command service stopped on its own"), "\(text)")
        for said in [
            "Exit codes: 0 stopped cleanly (every child stopped when asked, or on purpose);", "SIGHUP",
            "one that had run 60 s when it crashed is started again after 1 s", "130 a second signal",
        ] {
            #expect(text.contains(said), "\(text)")
        }
    }

    /// A projector that could not start (another one holds its file: exit 2) is down for the
    /// whole run, and `up` ends with exit 1, not as stopped cleanly. Its log line says what
    /// exit 2 means: the lock is no projection stopped at an event, which `strata status` shows.
    @Test func aProjectorDownForTheWholeRunMakesUpExitOne() throws {
        let data = try ChildProcess.temporaryDirectory("strata-up-held")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        let ports = try ServiceProcess.Ports.free()
        let events = ["--events", "tcp://127.0.0.1:\(ports.events)", "--history", "tcp://127.0.0.1:\(ports.history)"]
        let options = ["--data", data.path, "--key", ServiceProcess.Keys.service] + events
        let holder = try StrataProcess(["project", "readmodels"] + options)
        defer { holder.stop() }
        try holder.waitForLine(containing: "ready name=readmodels")

        let up = try StrataProcess(["up", "--commands", "tcp://127.0.0.1:\(ports.commands)"] + options)
        defer { up.stop() }
        let line = try up.waitForLine(containing: "readmodels stopped on its own (exit code 2) and stays down")
        #expect(line.contains("another projector holding its file"), "\(line)")
        #expect(!line.contains("strata status"), "\(line)")
        try up.waitForLine(containing: "project-audit: ready ")
        up.send(signal: SIGINT)
        #expect(up.waitForExit(timeout: 60) == 1, "\(up.log)")
        #expect(up.log.contains("up: audit stopped (exit code 0)"), "\(up.log)")
        #expect(holder.stop() == 0, "\(holder.log)")
    }

    /// `--checkpoint-key FILE`, a setting serve reads, reaches it through `up`, which refused
    /// the option; serve signs with that key and makes none in the data directory.
    @Test func upPassesTheCheckpointKeyToServe() throws {
        let keys = try ChildProcess.temporaryDirectory("strata-up-checkpoint-key")
        defer { try? FileManager.default.removeItem(at: keys) }
        let keyPath = keys.appendingPathComponent("checkpoint.key").path
        let made = try ChildProcess.strata(["keys", "checkpoint", "--data", keys.path, "--checkpoint-key", keyPath])
        #expect(made.exitCode == 0, "\(made.stderr)")
        let publicKey = made.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try withUp(arguments: ["--checkpoint-key", keyPath]) { up, data, _ in
            #expect(up.log.contains("serve: signing checkpoints with public key \(publicKey)"), "\(up.log)")
            #expect(!FileManager.default.fileExists(atPath: data.appendingPathComponent("checkpoint.key").path))
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        }
    }

    /// serve's own settings reach it through `up`, which refused them as unknown options, so an
    /// operator of the embedded default could not cap the store's size on disk: the serve `up`
    /// runs is given each of them, and with --max-store-bytes at its least it answers INTERNAL
    /// (STORE_FAILURE) once the store reaches it, and keeps running.
    @Test func upPassesServesOwnSettingsToServe() throws {
        let settings = [("--publisher-hwm", "50"), ("--checkpoint-interval", "0"), ("--max-store-bytes", "65536")]
        try withUp(arguments: settings.flatMap { [$0.0, $0.1] }) { up, data, children in
            let serve = try #require(children["serve"])
            let commandLine = try String(contentsOfFile: "/proc/\(serve)/cmdline", encoding: .utf8)
                .split(separator: "\0").map(String.init)
            for (option, value) in settings {
                let given = commandLine.indices.filter { commandLine[$0] == option }
                #expect(
                    given.count == 1 && given.allSatisfy { commandLine.dropFirst($0 + 1).first == value },
                    "\(commandLine)")
            }

            let ready = try up.waitForLine(containing: "serve: ready ")
            let commands = try #require(
                ready.split(separator: " ").first { $0.hasPrefix("commands=") }?.dropFirst("commands=".count))
            let workload = LendingWorkload(admin: ServiceProcess.admin, prefix: "capped", today: Timestamp.now().date)
            let bodies = workload.setup() + (0..<400).map { workload.loan($0)[0] }
            let secret = try ServiceProcess.secret(of: ServiceProcess.Keys.service, in: data)
            let context = try ZMQContext()
            func exchange(_ bodies: some Collection<CommandBody>) throws -> [JSONValue] {
                try System.exchange(Array(bodies), endpoint: String(commands), secret: secret, context: context)
            }
            // The store (48 KiB once prepared) takes commands until it reaches the limit; the
            // batch that would pass it is refused whole.
            let first = try exchange(bodies.prefix(1))
            #expect(first.first?["ok"] == .bool(true), "\(first.map(CanonicalJSON.string))")
            let replies = try exchange(bodies.dropFirst())
            let refused = replies.filter { $0["error"]?["code"] == .string("INTERNAL") }
            #expect(!refused.isEmpty, "the store was never full")
            #expect(refused.allSatisfy { $0["error"]?["reason"] == .string("STORE_FAILURE") }, "\(refused)")
            #expect(up.log.contains("the store refused a batch"), "\(up.log)")
            #expect(up.log.components(separatedBy: "started serve (pid ").count == 2, "\(up.log)")
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        }
    }

    /// A child that cannot be started (here: the executable is gone) is tried again after a
    /// delay, and runs once it can be started.
    @Test func aChildThatCannotBeStartedIsTriedAgain() throws {
        let directory = try ChildProcess.temporaryDirectory("strata-up-copy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let copy = directory.appendingPathComponent("strata")
        try FileManager.default.copyItem(at: ChildProcess.product("strata"), to: copy)
        try withUp(executable: copy) { up, _, children in
            try FileManager.default.removeItem(at: copy)
            kill(try #require(children["audit"]), SIGKILL)
            try up.waitForLine(containing: "cannot start audit: No such file or directory")
            try up.waitForLine(containing: "trying to start audit again in ")
            try FileManager.default.copyItem(at: ChildProcess.product("strata"), to: copy)
            let deadline = Date().addingTimeInterval(30)
            while up.log.components(separatedBy: "started audit (pid ").count < 3 && Date() < deadline {
                usleep(50_000)
            }
            #expect(up.log.components(separatedBy: "started audit (pid ").count == 3, "\(up.log)")
            while up.log.components(separatedBy: "project-audit: ready ").count < 3 && Date() < deadline {
                usleep(50_000)
            }
            #expect(up.log.components(separatedBy: "project-audit: ready ").count == 3, "\(up.log)")
            up.send(signal: SIGINT)
            #expect(up.waitForExit(timeout: 60) == 0, "\(up.log)")
        }
    }

    /// On a terminal set to stop background processes that write to it (`stty tostop`), every
    /// child runs and logs: each is in a process group of its own, in the background as the
    /// terminal sees it, and the kernel stopped serve (SIGTTOU) at its first log line, so that
    /// `up` waited for it with nothing said until it gave up after 120 s.
    @Test func childrenRunOnATerminalThatStopsBackgroundWriters() throws {
        let data = try ChildProcess.temporaryDirectory("strata-up-tostop")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        var endpoints: [String] = []
        for name in ["commands", "events", "history"] {
            endpoints += ["--\(name)", "tcp://127.0.0.1:\(try freeLoopbackPort())"]
        }
        // `up` as the session leader of a pseudo-terminal with TOSTOP set; Ctrl-C once every child
        // is ready (or after 30 s), then all it wrote and its exit code.
        let driver = #"""
            import os, pty, select, sys, termios, time
            pid, fd = pty.fork()
            if pid == 0:
                attributes = termios.tcgetattr(0)
                attributes[3] |= termios.TOSTOP
                termios.tcsetattr(0, termios.TCSANOW, attributes)
                os.execv(sys.argv[1], sys.argv[1:])
            output = b""
            def read(seconds, done):
                global output
                deadline = time.time() + seconds
                while time.time() < deadline and not done():
                    if select.select([fd], [], [], 0.1)[0]:
                        try:
                            chunk = os.read(fd, 65536)
                        except OSError:
                            return
                        if not chunk:
                            return
                        output += chunk
            names = [b"serve: ready", b"readmodels: ready", b"audit: ready"]
            read(30, lambda: all(name in output for name in names))
            os.write(fd, b"\x03")
            read(60, lambda: False)
            status = os.waitpid(pid, 0)[1]
            sys.stdout.write(output.decode("utf-8", "replace") + "exit=%d\n" % os.waitstatus_to_exitcode(status))
            """#
        let result = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", "-c", driver, ChildProcess.product("strata").path, "up", "--data", data.path, "--key",
             ServiceProcess.Keys.service] + endpoints)
        #expect(result.exitCode == 0, "\(result.stderr)")
        for name in ["serve", "project-readmodels", "project-audit"] {
            #expect(result.stdout.contains("\(name): ready "), "\(result.stdout)")
        }
        #expect(result.stdout.hasSuffix("exit=0\n"), "\(result.stdout)")
    }

    /// SIGTERM at every moment of a start: the process always ends, never runs on as if it
    /// had not been asked (a signal ignored until the listener was in place was lost).
    @Test func aSignalDuringStartIsNeverLost() throws {
        let data = try ChildProcess.temporaryDirectory("strata-start-signal")
        defer { try? FileManager.default.removeItem(at: data) }
        try ServiceProcess.prepare(data)
        for delay in stride(from: 0, to: 60, by: 2) {
            let serve = try StrataProcess(
                ["serve", "--data", data.path, "--commands", "tcp://127.0.0.1:*", "--events", "tcp://127.0.0.1:*",
                 "--history", "tcp://127.0.0.1:*"])
            usleep(useconds_t(delay * 1000))
            serve.send(signal: SIGTERM)
            let code = serve.waitForExit(timeout: 20)
            // Exit 0 (a graceful stop), or the signal's default action while the process was
            // still loading, before it could block the signal: either way it ended.
            #expect(code == 0 || code == SIGTERM, "SIGTERM \(delay) ms after the start: \(String(describing: code))\n\(serve.log)")
            if code == nil { serve.send(signal: SIGKILL) }
        }
    }
}

/// Runs `body` with `strata up` (and `arguments`) started on a fresh data directory and every
/// child ready, with the children's process ids by name; stops `up` afterwards if it still runs.
private func withUp(
    executable: URL? = nil, arguments: [String] = [], _ body: (StrataProcess, URL, [String: pid_t]) throws -> Void
) throws {
    let data = try ChildProcess.temporaryDirectory("strata-supervisor")
    defer { try? FileManager.default.removeItem(at: data) }
    try ServiceProcess.prepare(data)
    let endpoints = try ["commands", "events", "history"].flatMap { ["--\($0)", "tcp://127.0.0.1:\(try freeLoopbackPort())"] }
    let up = try StrataProcess(
        ["up", "--data", data.path, "--key", ServiceProcess.Keys.service] + endpoints + arguments,
        executable: executable)
    defer { up.stop() }
    var children: [String: pid_t] = [:]
    for name in ["serve", "readmodels", "audit"] {
        let started = try up.waitForLine(containing: "started \(name) (pid ")
        children[name] = pid_t(started.split(separator: "pid ")[1].prefix { $0.isNumber })
    }
    for name in ["serve", "project-readmodels", "project-audit"] { try up.waitForLine(containing: "\(name): ready ") }
    try body(up, data, children)
}

/// Whether process `pid` is gone (or a zombie no longer running) within `seconds`.
private func waitUntilGone(_ pid: pid_t, seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        // The state follows the command's closing parenthesis: Z for a zombie.
        if stat.split(separator: ")").last?.dropFirst().first == "Z" { return true }
        usleep(20_000)
    }
    return false
}

/// The ports tests hand to `strata up` are never the same twice: the kernel gave a port just
/// given back to the next request, and `up` was told to bind its events endpoint on its
/// commands endpoint's port (about 7 in 500 requests here).
@Test func freeLoopbackPortsAreNeverHandedOutTwice() throws {
    let ports = try (0..<500).map { _ in try freeLoopbackPort() }
    #expect(Set(ports).count == ports.count)
}
