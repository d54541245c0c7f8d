// Binds zmq.h (Debian: libzmq3-dev) for Swift.
#include <zmq.h>
