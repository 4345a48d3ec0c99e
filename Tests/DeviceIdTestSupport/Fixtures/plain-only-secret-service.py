#!/usr/bin/python3
"""A stand-in Secret Service that offers only the `plain` session algorithm, as a provider without
Diffie-Hellman support would: no real provider does, so tests of SecretTransport.encrypted use this.
It serves `org.freedesktop.secrets` on the session bus in DBUS_SESSION_BUS_ADDRESS, holds no items,
and answers nothing else a client of that test needs."""
import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

SERVICE = "org.freedesktop.Secret.Service"


class PlainOnlyService(dbus.service.Object):
    @dbus.service.method(SERVICE, in_signature="sv", out_signature="vo")
    def OpenSession(self, algorithm, _input):
        if algorithm != "plain":
            raise dbus.exceptions.DBusException("only plain", name="org.freedesktop.DBus.Error.NotSupported")
        return dbus.String("", variant_level=1), dbus.ObjectPath("/org/freedesktop/secrets/session/1")

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="ss", out_signature="v")
    def Get(self, interface, name):
        return self.GetAll(interface)[name]

    @dbus.service.method(dbus.PROPERTIES_IFACE, in_signature="s", out_signature="a{sv}")
    def GetAll(self, interface):
        return {"Collections": dbus.Array([], signature="o")} if interface == SERVICE else {}


DBusGMainLoop(set_as_default=True)
bus = dbus.SessionBus()
service = PlainOnlyService(bus, "/org/freedesktop/secrets")
name = dbus.service.BusName("org.freedesktop.secrets", bus)
GLib.MainLoop().run()
