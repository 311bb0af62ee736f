// The trip sharing page: /share/trips/{trip}#token=…[&provider=…], on FleetKit's journey-sharing
// library. The token is the rider's (a consumer token for this trip), as an app would pass it.
(function () {
  'use strict';
  const js = fleetkit.journeySharing;
  const $ = (id) => document.getElementById(id);
  const tripId = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() || '');
  const { token, claims, providerId, expired, authTokenFetcher } = js.fragmentCredentials(location.hash);

  const STATUS_TEXT = {
    NEW: 'Your ride is booked',
    ENROUTE_TO_PICKUP: 'Your driver is on the way',
    ARRIVED_AT_PICKUP: 'Your driver has arrived',
    ENROUTE_TO_INTERMEDIATE_DESTINATION: 'On the way to your stop',
    ARRIVED_AT_INTERMEDIATE_DESTINATION: 'At your stop',
    ENROUTE_TO_DROPOFF: 'On the way to your destination',
    COMPLETE: 'You have arrived. Ride completed',
    CANCELED: 'This ride was canceled',
  };

  function showMessage(text, kind) {
    const box = $('message');
    box.textContent = text;
    box.dataset.kind = kind || 'error';
    box.hidden = !text;
  }

  if (!token || !claims) {
    fail('This link is not valid: it carries no trip token.');
    return;
  }
  if (expired()) {
    fail('This link has expired. Ask for a new one.', 'expired');
    return;
  }
  if (!providerId) {
    fail('This link does not say which provider the trip belongs to (add &provider=… to it).');
    return;
  }

  function fail(text, kind) {
    const banner = $('banner');
    banner.textContent = 'Ride unavailable';
    banner.dataset.status = 'ERROR';
    showMessage(text, kind || 'error');
    if (typeof L === 'undefined') $('map').innerHTML = js.missingLeafletMessage;
  }

  const provider = new js.FleetEngineTripLocationProvider({
    providerId,
    tripId,
    authTokenFetcher,
  });
  const mapView = new js.JourneySharingMapView({ element: $('map'), locationProviders: [provider] });
  window.fleetkitShare = { provider, mapView };

  function minutes(seconds) {
    if (seconds < 60) return 'under a minute';
    const m = Math.round(seconds / 60);
    return m === 1 ? '1 min' : `${m} min`;
  }

  function metres(m) { return m >= 1000 ? `${(m / 1000).toFixed(1)} km` : `${Math.round(m / 10) * 10} m`; }

  // The fare agreed at booking, and the final one once the ride is over: a ride booked through
  // fleetd's booking API, read with the rider's own token. A trip that is no ride has none.
  let fareShown = '';
  async function showFare(final) {
    if (fareShown === 'final' || fareShown === 'none' || (fareShown === 'agreed' && !final)) return;
    try {
      const response = await fetch(
        `/fleetkit/v1/providers/${encodeURIComponent(providerId)}/rides/${encodeURIComponent(tripId)}`,
        { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
      if (!response.ok) {
        // A trip booked without the booking API, or a token that may not read rides: no fare.
        if (response.status === 404 || response.status === 403) fareShown = 'none';
        return;
      }
      const ride = await response.json();
      const fare = final && ride.finalFare ? ride.finalFare : ride.fare;
      if (!fare) {
        fareShown = 'none';
        return;
      }
      $('fare-label').textContent = final && ride.finalFare ? 'Final fare' : 'Fare';
      $('fare').textContent = `${js.formatMoney(fare)}${ride.product ? ` · ${ride.product}` : ''}` +
        (ride.pricing === 'METERED' && !(final && ride.finalFare) ? ' (metered: the estimate)' : '');
      $('fare').dataset.fare = js.formatMoney(fare);
      $('fare-row').hidden = false;
      fareShown = final && ride.finalFare ? 'final' : 'agreed';
    } catch (e) {
      // Shown at the next update.
    }
  }

  provider.addListener('update', ({ trip }) => {
    showMessage('');
    const status = trip.tripStatus || 'NEW';
    showFare(['COMPLETE', 'CANCELED'].includes(status));
    const banner = $('banner');
    banner.dataset.status = status;
    banner.textContent = STATUS_TEXT[status] || status;
    $('vehicle').textContent = trip.vehicleId || 'not yet assigned';
    const remaining = trip.remainingWaypoints || [];
    const beforePickup = ['NEW', 'ENROUTE_TO_PICKUP', 'ARRIVED_AT_PICKUP'].includes(status);
    // The target: the pickup until the rider is in, then this trip's drop-off.
    let target = -1;
    remaining.forEach((w, i) => {
      if (w.tripId && w.tripId !== tripId) return;
      if (target >= 0 && beforePickup) return;
      if (beforePickup ? w.waypointType === 'PICKUP_WAYPOINT_TYPE' : w.waypointType === 'DROP_OFF_WAYPOINT_TYPE') target = i;
    });
    $('eta-label').textContent = beforePickup ? 'Pickup' : 'Arrival';
    const eta = $('eta'), distance = $('distance');
    if (target < 0 || ['COMPLETE', 'CANCELED'].includes(status) || status === 'ARRIVED_AT_PICKUP') {
      eta.textContent = status === 'ARRIVED_AT_PICKUP' ? 'now' : '–';
      distance.textContent = '–';
      delete eta.dataset.seconds;
      delete distance.dataset.meters;
    } else {
      const metresLeft = remaining.slice(0, target + 1).reduce((sum, w) => sum + (w.distanceMeters || 0), 0);
      const etaTime = remaining[target].eta ? Date.parse(remaining[target].eta) : NaN;
      if (!isNaN(etaTime)) {
        const seconds = Math.max(0, (etaTime - Date.now()) / 1000);
        eta.dataset.seconds = String(Math.round(seconds));
        eta.textContent = minutes(seconds);
        eta.title = new Date(etaTime).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
      } else {
        // No ETA in this update: say nothing rather than keep an old one.
        eta.textContent = '–';
        delete eta.dataset.seconds;
        eta.title = '';
      }
      distance.dataset.meters = String(metresLeft);
      distance.textContent = metres(metresLeft);
    }
    if (status === 'CANCELED') showMessage('The ride was canceled. No vehicle will come.', 'final');
    if (status === 'COMPLETE') showMessage('Thank you for riding.', 'final');
  });

  provider.addListener('error', ({ error }) => {
    switch (error.status) {
      case 'UNAUTHENTICATED':
        fail(expired() ? 'This link has expired. Ask for a new one.' : 'This link is not valid.', expired() ? 'expired' : 'error');
        break;
      case 'NOT_FOUND':
        fail('There is no such trip.', 'not-found');
        break;
      case 'PERMISSION_DENIED':
        fail('This link is not for this trip.', 'error');
        break;
      default:
        // Network trouble or a restarting server: keep what is shown, say so, keep trying.
        showMessage('Connection lost. Reconnecting…', 'transient');
    }
  });
})();
