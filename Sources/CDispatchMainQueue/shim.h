#ifndef DEVICEID_CDISPATCHMAINQUEUE_SHIM_H
#define DEVICEID_CDISPATCHMAINQUEUE_SHIM_H

/*
 * The two entry points through which a run loop other than Dispatch's own drains the main queue: CoreFoundation's
 * run loop uses them on Linux. libdispatch.so exports them, but no installed header declares them.
 */

/* A file descriptor (an eventfd on Linux) that becomes readable when work is sent to the main queue. */
int _dispatch_get_main_queue_handle_4CF(void);

/* Runs the work waiting on the main queue. Only on the main thread, and never after dispatch_main(). */
void _dispatch_main_queue_callback_4CF(void *message);

#endif
