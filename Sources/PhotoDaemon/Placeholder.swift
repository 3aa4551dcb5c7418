// PhotoDaemon: under construction.
