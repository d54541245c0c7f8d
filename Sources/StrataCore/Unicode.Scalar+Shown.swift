extension Unicode.Scalar {
    /// Whether text shown to a person (a table, a log line) writes this scalar as an escape
    /// rather than as itself: a control a terminal acts on (C0, DEL, C1, ESC among them), a
    /// bidirectional control that would turn the rest of a line around, or a line or paragraph
    /// separator that some viewers break at. One rule for the command line and the logs alike.
    public var isEscapedWhenShown: Bool {
        // No ASCII scalar is a bidirectional control, so the common case needs no look-up of the
        // scalar's Unicode properties (the first thing a profile of a table of text showed).
        if value < 0x7F { return value < 0x20 }
        return value <= 0x9F || properties.isBidiControl || self == "\u{2028}" || self == "\u{2029}"
    }
}
