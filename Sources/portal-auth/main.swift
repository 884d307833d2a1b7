print("portal-auth")
