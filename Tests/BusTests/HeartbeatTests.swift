import Bus
import StrataCore
import Testing

@Suite("Heartbeats and topics")
struct HeartbeatTests {
    @Test func aHeartbeatIsItsTopicAndTheHead() {
        let frames = Heartbeat(head: 42).frames
        #expect(frames == [Array("heartbeat".utf8), Array(#"{"head":42}"#.utf8)])
        #expect(Heartbeat(json: frames[1]) == Heartbeat(head: 42))
    }

    @Test func onlyAnExactHeartbeatReads() {
        for text in [#"{"head":-1}"#, #"{"head":"1"}"#, #"{"head":1,"x":2}"#, "{}", "[1]", "head"] {
            #expect(Heartbeat(json: Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func anEventsTopicIsItsCategoryAndType() {
        #expect(eventTopic(category: "loan", type: "LoanApproved") == Array("loan.LoanApproved".utf8))
    }
}
