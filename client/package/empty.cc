// libsiomq.so is made of the client library's archives (client/CMakeLists.txt); a shared library target
// needs one source of its own.
