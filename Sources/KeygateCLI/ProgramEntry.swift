// The keygate executable's two ends: its arguments as argv's raw bytes (KeygateMain refuses
// names that are not valid UTF-8, so nothing is decoded here), and its exit status, given to
// exit(3) through KeygateCore/System's ProcessExit.
import Keygate

public enum ProgramEntry {
    /// argv[1...], each argument's bytes up to its NUL.
    public static var rawArguments: [[UInt8]] {
        var arguments: [[UInt8]] = []
        for index in 0..<Int(CommandLine.argc) where index > 0 {
            guard let pointer = CommandLine.unsafeArgv[index] else { continue }
            let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
            var length = 0
            while bytes[length] != 0 { length += 1 }
            arguments.append(Array(UnsafeBufferPointer(start: bytes, count: length)))
        }
        return arguments
    }

    /// Ends the process with `status` (exit(3)).
    public static func exit(_ status: Int32) -> Never {
        ProcessExit.now(status)
    }
}
