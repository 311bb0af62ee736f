print("fleetd")
