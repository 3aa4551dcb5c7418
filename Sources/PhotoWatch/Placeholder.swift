// PhotoWatch: under construction.
