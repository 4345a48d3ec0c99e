import Foundation

/// The checkout's `scripts/NAME`: a program the tests share with the command line, so that what it starts is started
/// one way.
func script(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts").appendingPathComponent(name).path
}
