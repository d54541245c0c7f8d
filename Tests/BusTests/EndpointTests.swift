import Bus
import CZeroMQ
import Foundation
import StrataTesting
import Testing

/// `Endpoint` judges an endpoint as libzmq does, so that a process can refuse one before it makes
/// anything: what it accepts libzmq binds or connects to, what it refuses libzmq refuses (or
/// misreads, or tries for ever). PORT in a form stands for a free loopback port.
@Suite struct EndpointTests {
    static let bindable = [
        "tcp://127.0.0.1:PORT", "tcp://*:PORT", "tcp://0.0.0.0:PORT", "tcp://127.0.0.1:*", "tcp://127.0.0.1:0",
        "tcp://*:*", "tcp://lo:PORT", "tcp://127.1:PORT", "tcp://[127.0.0.1]:PORT", "tcp://127.0.0.1%lo:PORT",
        "tcp://127.0.0.1%1:PORT", "tcp://127.0.0.1:0;127.0.0.1:PORT", "ipc://*", "ipc://@strata-endpoint-PORT",
        "inproc://strata-PORT",
    ]

    static let connectable = [
        "tcp://127.0.0.1:PORT", "tcp://10.0.0.5:7701", "tcp://commands:7701", "tcp://localhost:PORT",
        "tcp://my_host.example-1.com:7701", "tcp://[127.0.0.1]:PORT", "tcp://127.0.0.1:0;127.0.0.1:PORT",
        "tcp://lo:*;localhost:PORT", "ipc://@strata-endpoint-PORT", "ipc:///tmp/strata-endpoint-PORT",
        "ipc://relative/commands", "inproc://strata-PORT",
    ]

    /// Each refused form, what the refusal says, and whether libzmq refuses it too (else it binds
    /// another port than the one written, or a transport the processes do not use).
    static let unbindable: [(String, String, Bool)] = [
        ("foo", "foo names no transport; an endpoint is TRANSPORT://ADDRESS", true),
        ("", "names no transport", true),
        ("://127.0.0.1:PORT", "names no transport", true),
        ("TCP://127.0.0.1:PORT", "TCP:// is not a transport the processes use: tcp:// or ipc://", true),
        ("udp://127.0.0.1:PORT", "udp:// is not a transport", true),
        ("tcp://", "tcp:// names no address", true),
        ("tcp://127.0.0.1", "127.0.0.1 names no port", true),
        ("tcp://127.0.0.1:", "port  is not a number", true),
        ("tcp://127.0.0.1:99999", "port 99999 is beyond 65535", false),
        ("tcp://127.0.0.1:77o2", "port 77o2 is not a number", false),
        ("tcp://127.0.0.1:-1", "port -1 is not a number", false),
        ("tcp://127.0.0.1:PORT/", "is not a number", false),
        ("tcp://:PORT", "the address names no host; tcp://*:PORT binds every interface", true),
        ("tcp://localhost:PORT", "localhost is neither *, an IPv4 address nor one of this machine's network", true),
        ("tcp://commands:PORT", "commands is neither *", true),
        ("tcp://LO:PORT", "LO is neither *", true),
        ("tcp://127.0.0.1 :PORT", "127.0.0.1  is neither *", true),
        ("tcp://[::1]:PORT", "[::1] is an IPv6 address, and the sockets speak IPv4", true),
        ("tcp://::1:PORT", "::1 is an IPv6 address", true),
        ("tcp://[::]:PORT", "[::] is an IPv6 address", true),
        ("tcp://127.0.0.1%:PORT", "the zone % of 127.0.0.1% names no network interface", true),
        ("tcp://127.0.0.1%nosuchinterface:PORT", "the zone %nosuchinterface", true),
        ("tcp://127.0.0.1;127.0.0.1:PORT", "127.0.0.1 names no port", true),
        ("tcp://127.0.0.1:PORT;", "holds no address on one side of ';'", true),
        ("tcp://;127.0.0.1:PORT", "holds no address on one side of ';'", true),
        ("tcp://a:1;b:1;127.0.0.1:PORT", "holds more than one ';'", true),
        ("ipc://", "ipc:// names no path", true),
        ("ipc://@", "ipc://@ names no name", true),
        ("ipc:///tmp/" + String(repeating: "a", count: 120), "the path is 125 bytes; a Unix socket's holds at most 107",
         true),
        ("inproc://", "inproc:// names no endpoint", true),
    ]

    static let unconnectable: [(String, String)] = [
        ("foo", "names no transport"),
        ("tcp://127.0.0.1:*", "port * lets a bind choose one; a connect needs the port"),
        ("tcp://127.0.0.1:0", "port 0 lets a bind choose one; a connect needs the port"),
        ("tcp://127.0.0.1:99999", "port 99999 is beyond 65535"),
        ("tcp://*:PORT", "the host * lets a bind take every interface; a connect needs the host"),
        ("tcp://:PORT", "the address names no host"),
        ("tcp://[::1]:PORT", "[::1] is an IPv6 address"),
        ("tcp://-x:PORT", "-x:PORT begins with '-'"),
        ("tcp://.x:PORT", "begins with '.'"),
        ("tcp://x y:PORT", "x y:PORT holds ' ', which no host name or address holds"),
        ("tcp://hôte:PORT", "holds 'ô'"),
        ("tcp://bogus:0;127.0.0.1:PORT", "bogus is neither *"),
        ("tcp://127.0.0.1:PORT;", "holds no address on one side of ';'"),
        ("ipc://*", "ipc://* lets a bind choose a path; a connect needs the path"),
        ("ipc://", "names no path"),
    ]

    private func filled(_ form: String, _ port: Int) -> String {
        form.replacingOccurrences(of: "PORT", with: String(port))
    }

    @Test(arguments: bindable)
    func aFormLibzmqBindsIsAccepted(form: String) throws {
        let endpoint = filled(form, try freeLoopbackPort())
        #expect(Endpoint.problem(in: endpoint, binding: true) == nil)
        #expect(try libzmqTakes(endpoint, binding: true), "libzmq refused \(endpoint)")
    }

    @Test(arguments: connectable)
    func aFormLibzmqConnectsToIsAccepted(form: String) throws {
        let endpoint = filled(form, try freeLoopbackPort())
        #expect(Endpoint.problem(in: endpoint, binding: false) == nil)
        #expect(try libzmqTakes(endpoint, binding: false), "libzmq refused \(endpoint)")
    }

    @Test(arguments: unbindable)
    func aFormNoBindCanTakeIsRefusedSayingWhy(form: String, reason: String, libzmqRefuses: Bool) throws {
        let endpoint = filled(form, try freeLoopbackPort())
        let problem = try #require(Endpoint.problem(in: endpoint, binding: true), "\(endpoint)")
        #expect(problem.reason.contains(reason), "\(endpoint): \(problem.reason)")
        #expect(try libzmqTakes(endpoint, binding: true) == !libzmqRefuses, "\(endpoint)")
    }

    @Test(arguments: unconnectable)
    func aFormNoConnectCanReachIsRefusedSayingWhy(form: String, reason: String) throws {
        let port = try freeLoopbackPort()
        let endpoint = filled(form, port)
        let problem = try #require(Endpoint.problem(in: endpoint, binding: false), "\(endpoint)")
        #expect(problem.reason.contains(filled(reason, port)), "\(endpoint): \(problem.reason)")
    }

    /// libzmq connects to an IPv6 address, or a host of none, without a word, and then tries for
    /// ever with ZMQ_IPV6 off; the socket refuses them now.
    @Test func aSocketRefusesToConnectWhereItNeverCould() throws {
        let context = try ZMQContext()
        let dealer = try ZMQSocket(context, .dealer)
        let port = try freeLoopbackPort()
        for endpoint in ["tcp://[::1]:\(port)", "tcp://:\(port)", "tcp://bogus:0;127.0.0.1:\(port)", "ipc://*"] {
            let error = #expect(throws: ZMQError.self) { try dealer.connect(endpoint) }
            #expect(error?.description.hasPrefix("zmq_connect \(endpoint) (") == true, "\(String(describing: error))")
        }
    }

    /// Whether libzmq itself binds or connects a socket of its own to `endpoint`.
    private func libzmqTakes(_ endpoint: String, binding: Bool) throws -> Bool {
        let context = try #require(zmq_ctx_new())
        defer { zmq_ctx_term(context) }
        let socket = try #require(zmq_socket(context, binding ? ZMQ_ROUTER : ZMQ_DEALER))
        var linger: Int32 = 0
        zmq_setsockopt(socket, ZMQ_LINGER, &linger, MemoryLayout<Int32>.size)
        defer { zmq_close(socket) }
        return (binding ? zmq_bind(socket, endpoint) : zmq_connect(socket, endpoint)) == 0
    }
}
