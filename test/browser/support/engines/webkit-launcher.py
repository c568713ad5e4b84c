#!/usr/bin/python3
"""A WebKitGTK browser for WebKitWebDriver whose storage lives on disk.

MiniBrowser under automation keeps every session's website data in memory (like a private
window), where IndexedDB refuses Blobs. WebKitWebDriver starts this script in its place (the
session's 'webkitgtk:browserOptions' binary) with `--automation`; it opens a web context whose
website data (IndexedDB, service worker registrations, caches) is kept under the folder given by
`--data-dir=DIR` (or SWBUCKET_WEBKIT_DATA), allows automation, and gives the driver a web view in
a window each time the automation session asks for one.
"""
import os
import sys

import gi

gi.require_version('WebKit2', '4.1')
gi.require_version('Gtk', '3.0')
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402

NAME = 'swbucket-webkit'


def main(argv):
    if '--version' in argv:
        print(f'{NAME} {WebKit2.get_major_version()}.{WebKit2.get_minor_version()}.{WebKit2.get_micro_version()}')
        return 0
    if '--automation' not in argv:
        print(f'{NAME}: run by WebKitWebDriver with --automation', file=sys.stderr)
        return 2
    data_dir = os.environ.get('SWBUCKET_WEBKIT_DATA', '')
    for arg in argv:
        if arg.startswith('--data-dir='):
            data_dir = arg[len('--data-dir='):]
    if not data_dir:
        print(f'{NAME}: give the data folder with --data-dir=DIR or SWBUCKET_WEBKIT_DATA', file=sys.stderr)
        return 2
    os.makedirs(data_dir, exist_ok=True)

    Gtk.init([])
    manager = WebKit2.WebsiteDataManager(
        base_data_directory=os.path.join(data_dir, 'data'),
        base_cache_directory=os.path.join(data_dir, 'cache'),
    )
    context = WebKit2.WebContext(website_data_manager=manager)
    context.set_automation_allowed(True)
    windows = []

    def create_web_view(_session):
        view = WebKit2.WebView(web_context=context, is_controlled_by_automation=True)
        window = Gtk.Window()
        window.set_default_size(1024, 768)
        window.add(view)
        view.connect('close', lambda _v: window.destroy())
        window.connect('destroy', lambda w: windows.remove(w) if w in windows else None)
        window.show_all()
        windows.append(window)
        return view

    def automation_started(_context, session):
        info = WebKit2.ApplicationInfo()
        info.set_name(NAME)
        info.set_version(WebKit2.get_major_version(), WebKit2.get_minor_version(), WebKit2.get_micro_version())
        session.set_application_info(info)
        session.connect('create-web-view', create_web_view)

    context.connect('automation-started', automation_started)
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, 15, Gtk.main_quit)  # SIGTERM
    Gtk.main()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
