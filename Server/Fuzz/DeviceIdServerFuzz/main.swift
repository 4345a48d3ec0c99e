import FuzzDriver
import ServerFuzzTargets

// `DeviceIdServerFuzz TARGET [ARGUMENTS…]`: the server's readers of a backend's requests under libFuzzer
// (scripts/fuzz), or fed files.
FuzzDriver.main(ServerFuzzTarget.self)
