/* Gives c_tests/dropin_c.c, an ordinary program on LevelDB's C API, an exported
   function whose mangled C++ name holds "PSs" (leveldb::LogGPSsample()), the text
   of an old-ABI `std::string*` parameter, though nothing here is of that ABI. */
void log_gps_sample(void) __asm__("_ZN7leveldb12LogGPSsampleEv");

void log_gps_sample(void) {}
