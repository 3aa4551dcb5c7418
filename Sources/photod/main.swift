print("photod")
