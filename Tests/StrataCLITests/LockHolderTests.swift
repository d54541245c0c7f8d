import Testing

@testable import StrataCLI

/// `/proc/locks` read as the kernel writes it: the holder of an exclusive flock on one file.
@Suite struct LockHolderTests {
    @Test func theHolderOfAFilesExclusiveFlockIsFoundInTheKernelsTable() {
        let table = """
            1: POSIX  ADVISORY  WRITE 300 fe:00:77 0 EOF
            2: FLOCK  ADVISORY  READ  301 fe:00:77 0 EOF
            3: FLOCK  ADVISORY  WRITE 302 fe:01:77 0 EOF
            3: -> FLOCK  ADVISORY  WRITE 303 fe:00:77 0 EOF
            4: FLOCK  ADVISORY  WRITE 4242 fe:00:77 0 EOF
            """
        #expect(LockHolder.pid(in: table, device: 0xfe00, inode: 77) == 4242)
        #expect(LockHolder.pid(in: table, device: 0xfe01, inode: 77) == 302)
        #expect(LockHolder.pid(in: table, device: 0xfe00, inode: 78) == nil)
        // A device number past 8 bits of minor, as glibc splits a dev_t: 259:65536.
        let wide = "5: FLOCK  ADVISORY  WRITE 7 103:10000:9 0 EOF"
        #expect(LockHolder.pid(in: wide, device: (0x103 << 8) | (0x10000 << 12), inode: 9) == 7)
    }
}
