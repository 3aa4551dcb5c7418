print("photoctl")
