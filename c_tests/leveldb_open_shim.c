/* A shim that defines LevelDB's C API entry `leveldb_open` and nothing of C++ (no
   std::string in its symbols), as a program's own wrapper or stub might: loaded
   beside a real LevelDB, it must not change which policy the program gets
   (tests/suite/decided_once.rs). */
void leveldb_open(void) {}
