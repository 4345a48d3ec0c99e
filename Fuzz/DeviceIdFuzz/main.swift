import FuzzDriver
import FuzzTargets

// `DeviceIdFuzz TARGET [ARGUMENTS…]`: the library's decoders under libFuzzer (scripts/fuzz), or fed files.
FuzzDriver.main(FuzzTarget.self)
