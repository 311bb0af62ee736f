// The fleet page for operators: /fleet#token=…[&provider=…][&stale=SECONDS]. The token is a
// server or viewer token; the dispatch queue needs a server token.
(function () {
  'use strict';
  const js = fleetkit.journeySharing;
  const $ = (id) => document.getElementById(id);
  const { params, token, claims, providerId, expired, authTokenFetcher } = js.fragmentCredentials(location.hash);
  const staleSeconds = Number(params.get('stale') || 300);
  const STATE_COLOURS = { busy: '#1a73e8', idle: '#188038', OFFLINE: '#80868b', UNKNOWN_VEHICLE_STATE: '#80868b' };

  function showError(id, text) {
    $(id).textContent = text || '';
    $(id).hidden = !text;
  }

  if (!token || !claims || !providerId) {
    showError('error', !token || !claims
      ? 'This page needs a token: open it as /fleet#token=… (a server or viewer token).'
      : 'Add &provider=… to the address: the token does not say which provider it is for.');
    return;
  }
  if (expired()) {
    showError('error', 'The token in this address has expired. Mint a new one (fleetd token --key …).');
    return;
  }
  $('provider').textContent = providerId;

  const idOf = (vehicle) => vehicle.name.split('/').pop();
  const stateOf = (vehicle) => vehicle.vehicleState === 'ONLINE'
    ? ((vehicle.currentTrips || []).length ? 'busy' : 'idle') : (vehicle.vehicleState || 'UNKNOWN_VEHICLE_STATE');
  const positionOf = (vehicle) => {
    const p = vehicle.lastLocation && vehicle.lastLocation.location;
    return p ? [p.latitude || 0, p.longitude || 0] : null;
  };

  let map = null, cluster = null, selectedLayer = null;
  if (typeof L === 'undefined' || typeof L.markerClusterGroup !== 'function') {
    $('map').innerHTML = js.missingLeafletMessage;
  } else {
    map = L.map('map');
    js.addBasemap(map, '', null, () => true);
    cluster = L.markerClusterGroup({ maxClusterRadius: 45, disableClusteringAtZoom: 17 });
    map.addLayer(cluster);
    selectedLayer = L.layerGroup().addTo(map);
  }

  const markers = new Map();
  // Delivery vehicles' markers are keyed apart from the rides' cars (their IDs may repeat).
  const DELIVERY_PREFIX = 'delivery:';
  let selected = params.get('vehicle') || null;
  let follow = false;
  let latest = [];

  function icon(vehicle) {
    const colour = STATE_COLOURS[stateOf(vehicle)] || '#80868b';
    const heading = (vehicle.lastLocation && vehicle.lastLocation.heading) || 0;
    return L.divIcon({
      className: 'fk-fleet-vehicle', iconSize: [24, 24], iconAnchor: [12, 12],
      html: `<div style="transform: rotate(${heading}deg)"><svg viewBox="0 0 24 24" width="24" height="24">` +
        `<circle cx="12" cy="12" r="9" fill="${colour}" stroke="#fff" stroke-width="2"/>` +
        '<path d="M12 5 L16 14 L12 12 L8 14 Z" fill="#fff"/></svg></div>',
    });
  }

  const provider = new js.FleetEngineFleetLocationProvider({
    providerId, authTokenFetcher, pollingIntervalMillis: 2000, staleLocationThresholdMillis: staleSeconds * 1000,
    vehicleFilter: params.get('filter') || '',
  });
  $('filter').value = provider.vehicleFilter;

  provider.addListener('update', ({ vehicles, all }) => {
    showError('error', '');
    showError('filter-error', '');
    latest = vehicles;
    const count = $('vehicle-count');
    count.dataset.count = String(vehicles.length);
    count.textContent = `${vehicles.length} vehicle${vehicles.length === 1 ? '' : 's'}`;
    const hidden = all.length - vehicles.length;
    $('stale-count').textContent = hidden ? `${hidden} stale hidden` : '';
    drawMarkers(vehicles);
    drawLists(vehicles);
    drawSelection();
    drawReach(vehicles);
  });

  provider.addListener('error', ({ error, filter }) => {
    if (error.status === 'INVALID_ARGUMENT' && filter) {
      showError('filter-error', error.message);
    } else {
      showError('error', `${error.status}: ${error.message}`);
    }
  });

  // One marker per vehicle of a kind on the clustered map, keyed `prefix + id`; the kind's
  // markers of vehicles no longer listed go.
  function placeMarkers(vehicles, prefix, iconOf, onClick) {
    if (!cluster) return;
    const seen = new Set();
    for (const vehicle of vehicles) {
      const id = idOf(vehicle);
      const position = positionOf(vehicle);
      if (!position) continue;
      const key = prefix + id;
      seen.add(key);
      let marker = markers.get(key);
      if (!marker) {
        marker = L.marker(position, { icon: iconOf(vehicle), title: id });
        marker.on('click', () => onClick(id));
        markers.set(key, marker);
        cluster.addLayer(marker);
      } else {
        marker.setLatLng(position);
        marker.setIcon(iconOf(vehicle));
      }
    }
    for (const [key, marker] of markers) {
      const ofKind = prefix ? key.startsWith(prefix) : !key.startsWith(DELIVERY_PREFIX);
      if (ofKind && !seen.has(key)) { cluster.removeLayer(marker); markers.delete(key); }
    }
    cluster.refreshClusters();
  }

  const drawMarkers = (vehicles) => placeMarkers(vehicles, '', icon, select);

  function drawLists(vehicles) {
    const rows = vehicles.slice().sort((a, b) => idOf(a).localeCompare(idOf(b), undefined, { numeric: true }));
    const body = $('vehicles');
    body.replaceChildren(...rows.map((vehicle) => {
      const tr = document.createElement('tr');
      const id = idOf(vehicle);
      tr.className = 'vehicle-row' + (id === selected ? ' selected' : '');
      tr.dataset.vehicle = id;
      const state = stateOf(vehicle);
      tr.innerHTML = `<td></td><td><span class="dot" style="background:${STATE_COLOURS[state] || '#80868b'}"></span>${state === 'busy' || state === 'idle' ? `online, ${state}` : state.toLowerCase()}</td><td>${(vehicle.currentTrips || []).length}</td>`;
      tr.firstChild.textContent = id;
      tr.addEventListener('click', () => select(id));
      return tr;
    }));
    const trips = [];
    for (const vehicle of rows) for (const trip of vehicle.currentTrips || []) trips.push([trip, idOf(vehicle)]);
    $('trips').replaceChildren(...trips.map(([trip, vehicle]) => {
      const tr = document.createElement('tr');
      tr.innerHTML = '<td></td><td></td>';
      tr.children[0].textContent = trip;
      tr.children[1].textContent = vehicle;
      return tr;
    }));
  }

  function select(id) {
    selected = selected === id ? null : id;
    if (selectedVan) { selectedVan = null; clearTimeout(vanTimer); drawVanList(); }
    drawLists(latest);
    drawSelection(true);
  }

  function drawSelection(recentre) {
    if (selectedVan) return; // the van's own drawing keeps the details
    const details = $('details');
    if (selectedLayer) selectedLayer.clearLayers();
    const vehicle = latest.find((v) => idOf(v) === selected);
    if (!vehicle) { details.hidden = true; return; }
    details.hidden = false;
    const waypoints = vehicle.waypoints || [];
    details.innerHTML = '<strong></strong> <label><input type="checkbox" id="follow"> follow</label>' +
      '<div class="notice" id="detail-trips"></div><div class="notice" id="detail-next"></div>';
    details.querySelector('strong').textContent = idOf(vehicle);
    $('follow').checked = follow;
    $('follow').addEventListener('change', (e) => { follow = e.target.checked; drawSelection(true); });
    $('detail-trips').textContent = (vehicle.currentTrips || []).length
      ? `trips: ${(vehicle.currentTrips || []).join(', ')}` : 'no trips';
    $('detail-next').textContent = waypoints.length
      ? `next: ${waypoints[0].waypointType.replace('_WAYPOINT_TYPE', '').toLowerCase()} of ${waypoints[0].tripId}` : '';
    const position = positionOf(vehicle);
    if (!map || !position) return;
    const route = js.decodePolyline(vehicle.currentRouteSegment || '');
    if (route.length > 1) L.polyline(route, { color: '#1a73e8', weight: 5, opacity: 0.8 }).addTo(selectedLayer);
    for (const w of waypoints) {
      const p = w.location && w.location.point;
      if (!p) continue;
      const colour = w.waypointType === 'PICKUP_WAYPOINT_TYPE' ? '#188038' : w.waypointType === 'DROP_OFF_WAYPOINT_TYPE' ? '#d93025' : '#f29900';
      L.circleMarker([p.latitude || 0, p.longitude || 0], { radius: 7, color: '#fff', weight: 2, fillColor: colour, fillOpacity: 1 })
        .bindTooltip(`${w.waypointType.replace('_WAYPOINT_TYPE', '').toLowerCase()} · ${w.tripId}`).addTo(selectedLayer);
    }
    L.circleMarker(position, { radius: 16, color: '#1a73e8', weight: 2, fill: false }).addTo(selectedLayer);
    if (follow) map.panTo(position, { animate: true });
    else if (recentre) map.setView(position, Math.max(map.getZoom(), 16));
  }

  // Delivery vehicles (the Deliveries API), beside the rides' vehicles: vans on the map, their
  // open tasks in a table, and a selected van's remaining stops, in order, on the map and in the
  // details. Hidden while the provider has none, or the token may not read them.
  const deliveries = new js.FleetEngineDeliveryFleetLocationProvider({
    providerId, authTokenFetcher, pollingIntervalMillis: 2000, staleLocationThresholdMillis: staleSeconds * 1000,
  });
  const STOP_COLOURS = { NEW: '#80868b', ENROUTE: '#1a73e8', ARRIVED: '#188038' };
  let vans = [];
  let openTasks = new Map();
  let selectedVan = null;
  let selectedVanStops = null;

  function vanIcon() {
    return L.divIcon({
      className: 'fk-fleet-van', iconSize: [22, 22], iconAnchor: [11, 11],
      html: '<svg viewBox="0 0 22 22" width="22" height="22"><rect x="2" y="2" width="18" height="18" rx="4" ' +
        'fill="#e37400" stroke="#fff" stroke-width="2"/><path d="M6 8 h7 v6 h-7 z M13 10 h3 l2 2 v2 h-5 z" fill="#fff"/></svg>',
    });
  }

  deliveries.addListener('update', ({ deliveryVehicles }) => {
    vans = deliveryVehicles;
    $('deliveries').hidden = vans.length === 0;
    const count = $('delivery-count');
    count.dataset.count = String(vans.length);
    count.textContent = vans.length ? String(vans.length) : '';
    drawVans();
    drawVanList();
  });
  deliveries.addListener('error', ({ error }) => {
    if (error.status === 'PERMISSION_DENIED') { deliveries.stop(); return; }
    showError('error', `${error.status}: ${error.message}`);
  });

  const drawVans = () => placeMarkers(vans, DELIVERY_PREFIX, vanIcon, selectVan);

  function drawVanList() {
    const rows = vans.slice().sort((a, b) => idOf(a).localeCompare(idOf(b), undefined, { numeric: true }));
    $('delivery-vehicles').replaceChildren(...rows.map((van) => {
      const tr = document.createElement('tr');
      const id = idOf(van);
      tr.className = 'delivery-row' + (id === selectedVan ? ' selected' : '');
      tr.dataset.vehicle = id;
      tr.innerHTML = '<td></td><td></td><td></td>';
      tr.children[0].textContent = id;
      tr.children[1].textContent = String(openTasks.get(id) || 0);
      const age = Math.round((Date.now() - Date.parse(van.lastLocation.serverTime || van.lastLocation.updateTime)) / 1000);
      tr.children[2].textContent = isNaN(age) ? '' : `${Math.max(age, 0)} s ago`;
      tr.addEventListener('click', () => selectVan(id));
      return tr;
    }));
  }

  // Open tasks per van, from ListTasks (the vans' list carries no stops).
  async function refreshOpenTasks() {
    setTimeout(refreshOpenTasks, 5000);
    if (!vans.length) return;
    const counts = new Map();
    let pageToken = '';
    try {
      do {
        const query = new URLSearchParams({ pageSize: '100', filter: 'state = OPEN' });
        if (pageToken) query.set('pageToken', pageToken);
        const response = await fetch(`/v1/providers/${encodeURIComponent(providerId)}/tasks?${query}`,
          { headers: { Authorization: 'Bearer ' + (await authTokenFetcher()).token }, cache: 'no-store' });
        if (!response.ok) return;
        const page = await response.json();
        for (const task of page.tasks || []) {
          if (task.deliveryVehicleId) counts.set(task.deliveryVehicleId, (counts.get(task.deliveryVehicleId) || 0) + 1);
        }
        pageToken = page.nextPageToken || '';
      } while (pageToken);
    } catch (e) {
      return;
    }
    openTasks = counts;
    drawVanList();
  }

  function selectVan(id) {
    selectedVan = selectedVan === id ? null : id;
    selectedVanStops = null;
    selected = null;
    drawLists(latest);
    drawVanList();
    refreshSelectedVan(true);
  }

  // The selected van with its remaining stops (GetDeliveryVehicle), every 2 s while selected.
  let vanTimer = null;
  async function refreshSelectedVan(recentre) {
    clearTimeout(vanTimer);
    const id = selectedVan;
    if (!id) { drawSelection(); return; }
    vanTimer = setTimeout(() => refreshSelectedVan(false), 2000);
    let van;
    try {
      van = await deliveries.deliveryVehicle(id);
    } catch (error) {
      showError('error', `${error.status}: ${error.message}`);
      return;
    }
    if (selectedVan !== id) return;
    selectedVanStops = van.remainingVehicleJourneySegments || [];
    drawVanSelection(van, recentre);
  }

  function drawVanSelection(van, recentre) {
    const details = $('details');
    if (selectedLayer) selectedLayer.clearLayers();
    details.hidden = false;
    const segments = selectedVanStops || [];
    details.innerHTML = '<strong></strong> <span class="notice" id="van-stop-count"></span><ol id="van-stops"></ol>';
    details.querySelector('strong').textContent = idOf(van);
    $('van-stop-count').textContent = `${segments.length} stop${segments.length === 1 ? '' : 's'} left`;
    $('van-stop-count').dataset.count = String(segments.length);
    $('van-stops').replaceChildren(...segments.map((segment) => {
      const li = document.createElement('li');
      const stop = segment.stop || {};
      li.className = 'van-stop';
      li.dataset.state = stop.state || 'NEW';
      li.textContent = `${(stop.state || 'NEW').toLowerCase()}: ${(stop.tasks || []).map((t) => t.taskId).join(', ')}`;
      return li;
    }));
    const position = positionOf(van);
    if (!map) return;
    const first = segments[0];
    const path = first && first.path ? first.path.map((p) => [p.latitude || 0, p.longitude || 0]) : [];
    if (path.length > 1) L.polyline(path, { color: '#e37400', weight: 5, opacity: 0.8 }).addTo(selectedLayer);
    segments.forEach((segment, index) => {
      const p = js.point(segment.stop && segment.stop.plannedLocation);
      if (!p) return;
      L.marker(p, {
        icon: L.divIcon({
          className: 'fk-van-stop', iconSize: [20, 20], iconAnchor: [10, 10],
          html: `<div style="background:${STOP_COLOURS[segment.stop.state] || '#80868b'}">${index + 1}</div>`,
        }),
      }).bindTooltip(`${index + 1} · ${(segment.stop.state || 'NEW').toLowerCase()} · ` +
        (segment.stop.tasks || []).map((t) => t.taskId).join(', ')).addTo(selectedLayer);
    });
    if (position) {
      L.circleMarker(position, { radius: 16, color: '#e37400', weight: 2, fill: false }).addTo(selectedLayer);
      if (recentre) map.setView(position, Math.max(map.getZoom(), 15));
    }
  }

  $('filter-form').addEventListener('submit', (event) => {
    event.preventDefault();
    provider.setVehicleFilter($('filter').value.trim());
  });

  // The dispatch queue: rides waiting, assigned, and those nobody could serve.
  async function refreshQueue(once) {
    const queue = $('queue');
    let rides = [];
    let pageToken = '';
    try {
      do {
        const query = new URLSearchParams({ pageSize: '1000' });
        if (pageToken) query.set('pageToken', pageToken);
        const response = await fetch(`/fleetkit/v1/providers/${encodeURIComponent(providerId)}/rides?${query}`,
          { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
        if (!response.ok) {
          const error = await js.FleetEngineError.fromResponse(response);
          queue.textContent = error.status === 'PERMISSION_DENIED'
            ? 'The dispatch queue needs a server token.'
            : error.code === 404 || error.status === 'UNIMPLEMENTED' || error.status === 'FAILED_PRECONDITION'
              ? 'fleetd runs without its dispatcher (fleetd serve --dispatch).' : `${error.status}: ${error.message}`;
          return;
        }
        const page = await response.json();
        rides = rides.concat(page.rides || []);
        pageToken = page.nextPageToken || '';
      } while (pageToken);
    } catch (e) {
      queue.textContent = 'fleetd cannot be reached.';
      return;
    } finally {
      if (!once) setTimeout(refreshQueue, 2000);
    }
    const count = (state) => rides.filter((r) => r.state === state).length;
    const waiting = rides.filter((r) => r.state === 'WAITING');
    queue.innerHTML = '<div class="counts">' +
      `<span data-state="WAITING">${count('WAITING')} waiting</span>` +
      `<span data-state="SCHEDULED">${count('SCHEDULED')} scheduled</span>` +
      `<span data-state="ASSIGNED">${count('ASSIGNED')} assigned</span>` +
      `<span data-state="COMPLETED">${count('COMPLETED')} completed</span>` +
      `<span data-state="NO_VEHICLE_FOUND">${count('NO_VEHICLE_FOUND')} unserved</span></div>` +
      '<table><tbody id="waiting"></tbody></table><table><tbody id="scheduled"></tbody></table>';
    const scheduled = rides.filter((r) => r.state === 'SCHEDULED')
      .sort((a, b) => Date.parse(a.pickupTime || 0) - Date.parse(b.pickupTime || 0));
    $('scheduled').replaceChildren(...scheduled.slice(0, 20).map((ride) => {
      const tr = document.createElement('tr');
      tr.className = 'scheduled-ride';
      tr.dataset.ride = ride.name.split('/').pop();
      tr.innerHTML = '<td></td><td></td><td class="notice"></td>';
      tr.children[0].textContent = tr.dataset.ride;
      tr.children[1].textContent = ride.pickupTime
        ? `pickup ${new Date(ride.pickupTime).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' })}` : '';
      tr.children[2].textContent = ride.product || '';
      return tr;
    }));
    $('waiting').replaceChildren(...waiting.slice(0, 20).map((ride) => {
      const tr = document.createElement('tr');
      const age = ride.createTime ? Math.round((Date.now() - Date.parse(ride.createTime)) / 1000) : 0;
      tr.innerHTML = '<td></td><td></td>';
      tr.children[0].textContent = ride.name.split('/').pop();
      tr.children[1].textContent = `waiting ${age} s`;
      return tr;
    }));
  }

  // Calls to fleetd's REST API with the page's token; errors as FleetEngineError.
  const api = `/fleetkit/v1/providers/${encodeURIComponent(providerId)}`;
  async function call(method, path, body) {
    const response = await fetch(path, {
      method, cache: 'no-store',
      headers: Object.assign({ Authorization: 'Bearer ' + token }, body ? { 'Content-Type': 'application/json' } : {}),
      body: body ? JSON.stringify(body) : undefined,
    });
    if (!response.ok) throw await js.FleetEngineError.fromResponse(response);
    return response.json();
  }

  const money = js.formatMoney;
  const durationSeconds = (d) => Number(String(d || '0s').replace('s', ''));

  // Booking: the pickup and drop-off from map clicks, a place search, or LAT,LNG; quotes per
  // product; a ride now or at a time.
  const points = { pickup: null, dropoff: null };
  const pointMarkers = {};
  let picking = 'pickup';
  let lastQuotes = null;

  function setPicking(which) {
    picking = which;
    $('pick-pickup').classList.toggle('active', which === 'pickup');
    $('pick-dropoff').classList.toggle('active', which === 'dropoff');
    $('pick-reach').classList.toggle('active', which === 'reach');
  }

  function setPoint(which, lat, lng, label) {
    points[which] = { latitude: lat, longitude: lng };
    $(which).value = label || `${lat.toFixed(5)},${lng.toFixed(5)}`;
    $(which).dataset.point = `${lat},${lng}`;
    lastQuotes = null;
    $('quotes').replaceChildren();
    if (map) {
      if (pointMarkers[which]) pointMarkers[which].remove();
      const colour = which === 'pickup' ? '#188038' : '#d93025';
      pointMarkers[which] = L.circleMarker([lat, lng], { radius: 8, color: '#fff', weight: 2, fillColor: colour, fillOpacity: 1 })
        .bindTooltip(which === 'pickup' ? 'pickup' : 'drop-off').addTo(map);
    }
    if (which === 'pickup' && !points.dropoff) setPicking('dropoff');
  }

  if (map) {
    map.on('click', (event) => picking === 'reach'
      ? showReach(event.latlng.lat, event.latlng.lng) : setPoint(picking, event.latlng.lat, event.latlng.lng));
  }
  $('pick-pickup').addEventListener('click', () => setPicking('pickup'));
  $('pick-dropoff').addEventListener('click', () => setPicking('dropoff'));
  $('pick-reach').addEventListener('click', () => setPicking('reach'));

  // Reach: the areas a car gets to from a point within some minutes (fleetd's isochrones, on
  // today's road metric), drawn on the map, and the cars inside each, kept current as they move.
  let reach = null, reachLayer = null;

  // Even-odd over every ring of a Polygon or MultiPolygon feature.
  function featureContains(feature, lat, lng) {
    const g = feature.geometry;
    const polygons = g.type === 'Polygon' ? [g.coordinates] : g.type === 'MultiPolygon' ? g.coordinates : [];
    return polygons.some((rings) => {
      let inside = false;
      for (const ring of rings) {
        for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
          const [xi, yi] = ring[i], [xj, yj] = ring[j];
          if ((yi > lat) !== (yj > lat) && lng < xi + (lat - yi) / (yj - yi) * (xj - xi)) inside = !inside;
        }
      }
      return inside;
    });
  }

  async function showReach(lat, lng) {
    showError('reach-error', '');
    const minutes = $('reach-minutes').value.replace(/\s+/g, '');
    $('reach-from').value = `${lat.toFixed(5)},${lng.toFixed(5)}`;
    let body;
    try {
      const response = await fetch(
        `/isochrone/v1/driving/${lng},${lat}?contours_minutes=${encodeURIComponent(minutes)}&polygons=true`, { cache: 'no-store' });
      body = await response.json();
      if (!response.ok) throw new Error(body.message || body.code || response.statusText);
    } catch (e) {
      showError('reach-error', `Reach: ${e.message}`);
      return;
    }
    // The response lists the largest contour first; the list reads nearest first.
    reach = { lat, lng, features: body.features.slice().reverse() };
    if (map) {
      if (reachLayer) reachLayer.remove();
      reachLayer = L.layerGroup().addTo(map);
      L.geoJSON(body, {
        style: (f) => ({ color: f.properties.color, weight: 2, fillColor: f.properties.fillColor, fillOpacity: 0.15 }),
        interactive: false,
      }).addTo(reachLayer);
      L.circleMarker([lat, lng], { radius: 6, color: '#fff', weight: 2, fillColor: '#202124', fillOpacity: 1 })
        .bindTooltip('reach from here').addTo(reachLayer);
    }
    drawReach(latest);
  }

  // Each car with a position goes under the nearest contour it is inside.
  function drawReach(vehicles) {
    if (!reach) return;
    const within = reach.features.map(() => []);
    for (const vehicle of vehicles) {
      const position = positionOf(vehicle);
      if (!position) continue;
      const i = reach.features.findIndex((f) => featureContains(f, position[0], position[1]));
      if (i >= 0) within[i].push(vehicle);
    }
    const summary = $('reach');
    let total = 0;
    summary.textContent = reach.features.map((f, i) => {
      total += within[i].length;
      return `${total} car${total === 1 ? '' : 's'} within ${f.properties.contour} min`;
    }).join(', ');
    summary.dataset.counts = within.map((cars) => cars.length).join(',');
    const rows = [];
    reach.features.forEach((f, i) => {
      for (const vehicle of within[i].sort((a, b) => idOf(a).localeCompare(idOf(b), undefined, { numeric: true }))) {
        const tr = document.createElement('tr');
        tr.className = 'vehicle-row';
        tr.dataset.vehicle = idOf(vehicle);
        tr.dataset.minutes = String(f.properties.contour);
        tr.innerHTML = `<td></td><td>≤ ${f.properties.contour} min</td><td>${stateOf(vehicle) === 'idle' ? 'free' : stateOf(vehicle)}</td>`;
        tr.firstChild.textContent = idOf(vehicle);
        tr.addEventListener('click', () => select(idOf(vehicle)));
        rows.push(tr);
      }
    });
    $('reach-vehicles').replaceChildren(...rows);
  }

  $('reach-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const pair = $('reach-from').value.split(',').map((part) => Number(part.trim()));
    if (pair.length !== 2 || !pair.every((n) => isFinite(n))) {
      showError('reach-error', 'Reach: click the map, or type LAT,LNG.');
      return;
    }
    showReach(pair[0], pair[1]);
  });

  // A typed place: LAT,LNG, or a search with the offline geocoder (needs an API key: &key=…).
  async function resolvePlace(which) {
    const text = $(which).value.trim();
    const pair = text.split(',').map((part) => Number(part.trim()));
    if (pair.length === 2 && pair.every((n) => isFinite(n)) && text.match(/^\s*-?[\d.]+\s*,\s*-?[\d.]+\s*$/)) {
      setPoint(which, pair[0], pair[1]);
      return true;
    }
    if (!text) {
      showError('book-error', `Choose the ${which === 'pickup' ? 'pickup' : 'drop-off'}: click the map, or type a place.`);
      return false;
    }
    const key = params.get('key');
    if (!key) {
      showError('book-error', 'Searching places needs an API key: add &key=… to the address (fleetd apikeys add), or click the map.');
      return false;
    }
    const query = new URLSearchParams({ q: text, page_size: '1', key });
    if (map) { const c = map.getCenter(); query.set('near', `${c.lat},${c.lng}`); }
    const response = await fetch(`/fleetkit/v1/places:search?${query}`, { cache: 'no-store' });
    if (!response.ok) {
      const error = await js.FleetEngineError.fromResponse(response);
      showError('book-error', `Place search: ${error.status}: ${error.message}`);
      return false;
    }
    const place = ((await response.json()).places || [])[0];
    if (!place) {
      showError('book-error', `No place called "${text}".`);
      return false;
    }
    setPoint(which, place.coordinate.latitude, place.coordinate.longitude, place.name);
    return true;
  }
  for (const which of ['pickup', 'dropoff']) {
    $(which).addEventListener('input', () => { points[which] = null; delete $(which).dataset.point; });
  }

  function pickupTime() {
    const when = $('when').value;
    return when ? new Date(when).toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
  }

  $('book-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    showError('book-error', '');
    $('booked').textContent = '';
    delete $('booked').dataset.ride;
    delete $('booked').dataset.state;
    try {
      if (!points.pickup && !(await resolvePlace('pickup'))) return;
      if (!points.dropoff && !(await resolvePlace('dropoff'))) return;
      const request = { pickupPoint: { point: points.pickup }, dropoffPoint: { point: points.dropoff } };
      const at = pickupTime();
      if (at) request.pickupTime = at;
      const response = await call('POST', `${api}/rides:quote`, request);
      lastQuotes = { request, quotes: response.quotes || [] };
      drawQuotes();
    } catch (error) {
      showError('book-error', error.status ? `${error.status}: ${error.message}` : 'fleetd cannot be reached.');
    }
  });

  function drawQuotes() {
    const { quotes } = lastQuotes;
    if (!quotes.length) {
      $('quotes').innerHTML = '<tr><td class="notice">No product can carry this ride.</td></tr>';
      return;
    }
    $('quotes').replaceChildren(...quotes.map((quote) => {
      const tr = document.createElement('tr');
      tr.className = 'quote';
      tr.dataset.product = quote.product;
      const eta = quote.pickupEta ? `car in ${Math.max(1, Math.round(durationSeconds(quote.pickupEta) / 60))} min`
        : (lastQuotes.request.pickupTime ? 'booked ahead' : 'no car nearby');
      const surge = (quote.surgeMultiplier || 1) > 1 ? ` · surge ×${quote.surgeMultiplier.toFixed(2)}` : '';
      tr.innerHTML = '<td class="product"></td><td class="fare"></td><td class="notice"></td><td><button type="button">Book</button></td>';
      tr.children[0].textContent = quote.product;
      tr.children[1].textContent = money(quote.fare);
      tr.children[1].title = (quote.fareBreakdown || []).map((item) => `${item.kind}: ${money(item.amount)}`).join('\n');
      // A shared ride says how long it may take with other riders' detours.
      const longest = quote.maximumTripDuration
        ? ` · up to ${Math.max(1, Math.round(durationSeconds(quote.maximumTripDuration) / 60))} min aboard` : '';
      tr.children[2].textContent = `${eta} · ${(quote.tripDistanceMeters / 1000).toFixed(1)} km${longest}${surge}`;
      if (surge) tr.children[2].classList.add('surge');
      tr.querySelector('button').addEventListener('click', () => book(quote));
      return tr;
    }));
  }

  async function book(quote) {
    showError('book-error', '');
    const ride = Object.assign({}, lastQuotes.request, { quoteId: quote.quoteId });
    const id = `ride-${Math.random().toString(36).slice(2, 10)}`;
    try {
      const booked = await call('POST', `${api}/rides?rideId=${encodeURIComponent(id)}`, ride);
      const when = booked.pickupTime ? ` for ${new Date(booked.pickupTime).toLocaleString()}` : '';
      $('booked').textContent = `Booked ${id}: ${booked.product}, ${money(booked.fare)}${when} — ${booked.state}`;
      $('booked').dataset.ride = id;
      $('booked').dataset.state = booked.state;
      $('quotes').replaceChildren();
      refreshQueue(true);
    } catch (error) {
      showError('book-error', error.status ? `${error.status}: ${error.message}` : 'fleetd cannot be reached.');
    }
  }

  // Service areas and zones, each zone with its surge now; redrawn every 10 s.
  let areasLayer = map ? L.layerGroup().addTo(map) : null;
  async function refreshAreas() {
    let areas = [];
    try {
      areas = (await call('GET', `${api}/areas`)).areas || [];
    } catch (error) {
      $('zones').innerHTML = '<tr><td class="notice"></td></tr>';
      $('zones').querySelector('td').textContent = error.status ? `${error.status}: ${error.message}` : 'fleetd cannot be reached.';
      setTimeout(refreshAreas, 10000);
      return;
    }
    setTimeout(refreshAreas, 10000);
    const zones = areas.filter((a) => a.kind === 'ZONE');
    $('zones').replaceChildren(...(zones.length ? zones.map((zone) => {
      const tr = document.createElement('tr');
      tr.className = 'zone';
      tr.dataset.zone = zone.name;
      tr.dataset.surge = String(zone.surge ? zone.surgeMultiplier : 1);
      tr.innerHTML = '<td></td><td></td><td class="notice"></td>';
      tr.children[0].textContent = zone.name;
      tr.children[1].textContent = zone.surge ? `surge ×${(zone.surgeMultiplier || 1).toFixed(2)}` : '';
      tr.children[1].title = zone.surgeReason || '';
      tr.children[2].textContent = zone.fee ? `fee ${money(zone.fee)}` : '';
      return tr;
    }) : [Object.assign(document.createElement('tr'), { innerHTML: '<td class="notice">No zones (fleetd serve --service-areas).</td>' })]));
    if (!areasLayer) return;
    areasLayer.clearLayers();
    for (const area of areas) {
      const latlngs = (area.polygons || []).map((polygon) =>
        (polygon.rings || []).map((ring) => (ring.points || []).map((p) => [p.latitude || 0, p.longitude || 0])));
      const surge = area.surge ? (area.surgeMultiplier || 1) : 1;
      const style = area.kind === 'SERVICE_AREA'
        ? { color: '#1a73e8', weight: 2, dashArray: '6 6', fill: false, interactive: false }
        : { color: surge > 1 ? '#d93025' : '#f29900', weight: 1.5, fillOpacity: Math.min(0.35, 0.08 + (surge - 1) * 0.2) };
      const layer = L.polygon(latlngs, style);
      if (area.kind === 'ZONE') {
        layer.bindTooltip(`${area.name}${area.surge ? ` · surge ×${surge.toFixed(2)}` : ''}${area.fee ? ` · fee ${money(area.fee)}` : ''}`);
        // A click on a zone bubbles to the map, which takes it as the pickup or drop-off.
      }
      layer.addTo(areasLayer);
    }
  }

  // Served share and waits, live, from this fleetd's /metrics (its own commits' rides).
  async function refreshService() {
    setTimeout(refreshService, 5000);
    let text = '';
    try {
      const response = await fetch('/metrics', { cache: 'no-store' });
      if (!response.ok) return;
      text = await response.text();
    } catch (e) {
      return;
    }
    const value = (name) => {
      const line = text.split('\n').find((l) => l.startsWith(name + ' '));
      return line ? Number(line.split(' ')[1]) : 0;
    };
    const pickedUp = value('fleetd_ride_pickup_wait_seconds_count');
    const unserved = value('fleetd_rides_no_vehicle_found_total');
    const service = $('service');
    if (!pickedUp && !unserved) { service.replaceChildren(); return; }
    const buckets = text.split('\n').filter((l) => l.startsWith('fleetd_ride_pickup_wait_seconds_bucket'))
      .map((l) => [Number((l.match(/le="([^"]+)"/) || [])[1]), Number(l.split(' ').pop())])
      .filter(([le]) => isFinite(le)).sort((a, b) => a[0] - b[0]);
    const p90 = (buckets.find(([, n]) => n >= 0.9 * pickedUp) || [NaN])[0];
    const mean = pickedUp ? value('fleetd_ride_pickup_wait_seconds_sum') / pickedUp : NaN;
    const served = Math.round(1000 * pickedUp / (pickedUp + unserved)) / 10;
    service.innerHTML = '<span id="served"></span><span id="wait"></span>';
    $('served').textContent = `${served} % served`;
    $('served').dataset.share = String(served);
    $('wait').textContent = isNaN(mean) ? '' : `wait: mean ${(mean / 60).toFixed(1)} min` +
      (isNaN(p90) ? '' : `, p90 ≤ ${Math.round(p90 / 60)} min`);
  }

  provider.start();
  deliveries.start();
  refreshOpenTasks();
  refreshQueue();
  refreshAreas();
  refreshService();
  window.fleetkitFleet = {
    provider, deliveries, map, markers,
    visibleVehicleCount: () => latest.length,
    vehicles: () => latest,
    select, selectVan, setPoint, showReach,
  };
})();
