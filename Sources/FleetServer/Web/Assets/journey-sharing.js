/*
 * FleetKit journey sharing, version 1: follow a trip (or a fleet) served by fleetd on a
 * Leaflet map, with the concepts of Google's JavaScript journey-sharing library:
 *
 *   const provider = new fleetkit.journeySharing.FleetEngineTripLocationProvider({
 *     providerId: 'my-project', tripId: 'trip-1', authTokenFetcher });
 *   const mapView = new fleetkit.journeySharing.JourneySharingMapView({
 *     element: document.getElementById('map'), locationProviders: [provider] });
 *   provider.addListener('update', e => console.log(e.trip.tripStatus));
 *
 * `authTokenFetcher({context: {tripId}})` returns (a promise of) `{token, expiresInSeconds}`.
 * Trips come from fleetd's server-sent events (GET /fleetkit/v1/…/trips/{trip}:watch); while that stream is
 * down the provider polls GetTrip in the JOURNEY_SHARING view every `pollingIntervalMillis`.
 * A shipment is followed the same way with FleetEngineShipmentLocationProvider({providerId,
 * trackingId, authTokenFetcher}) (GetTaskTrackingInfo, and …/taskTrackingInfo/{id}:watch).
 * Needs Leaflet (window.L) for the map view; the providers need nothing.
 */
(function (global) {
  'use strict';

  const DEFAULT_POLLING_INTERVAL_MILLIS = 5000;
  const MINIMUM_POLLING_INTERVAL_MILLIS = 5000;
  const TERMINAL = ['COMPLETE', 'CANCELED'];
  const VEHICLE_CATEGORIES = ['AUTO', 'TAXI', 'TRUCK', 'TWO_WHEELER', 'BICYCLE', 'PEDESTRIAN'];
  const TRAFFIC_COLOURS = { NORMAL: '#1a73e8', SLOW: '#f29900', TRAFFIC_JAM: '#d93025' };

  /** Listeners by event name, as Google's providers offer them (addListener returns a handle). */
  class Emitter {
    constructor() { this._listeners = {}; }
    addListener(name, listener) {
      (this._listeners[name] = this._listeners[name] || []).push(listener);
      return { remove: () => this.removeListener(name, listener) };
    }
    removeListener(name, listener) {
      this._listeners[name] = (this._listeners[name] || []).filter((l) => l !== listener);
    }
    _emit(name, event) {
      for (const listener of (this._listeners[name] || []).slice()) {
        try { listener(event); } catch (e) { setTimeout(() => { throw e; }); }
      }
    }
  }

  /** A fleetd or Fleet Engine error: HTTP `code`, gRPC-style `status`, `message`. */
  class FleetEngineError extends Error {
    constructor(status, message, code) {
      super(message);
      this.name = 'FleetEngineError';
      this.status = status;
      this.code = code || 0;
    }
    static async fromResponse(response) {
      let body = null;
      try { body = await response.json(); } catch (e) { /* not JSON */ }
      const error = (body && body.error) || {};
      return new FleetEngineError(
        error.status || (response.status === 401 ? 'UNAUTHENTICATED' : 'UNKNOWN'),
        error.message || `HTTP ${response.status}`, response.status);
    }
  }

  /** Tokens from the app's fetcher, reused until shortly before they expire. */
  class TokenCache {
    constructor(fetcher, context) {
      if (typeof fetcher !== 'function') throw new TypeError('authTokenFetcher must be a function');
      this.fetcher = fetcher;
      this.context = context;
      this.token = null;
      this.expiresAt = 0;
      this.pending = null;
    }
    invalidate() { this.token = null; }
    async get() {
      if (this.token && Date.now() < this.expiresAt - 10000) return this.token;
      if (!this.pending) {
        this.pending = Promise.resolve(this.fetcher({ context: this.context() })).then((result) => {
          if (!result || typeof result.token !== 'string' || typeof result.expiresInSeconds !== 'number') {
            throw new TypeError('authTokenFetcher must return {token, expiresInSeconds}');
          }
          this.token = result.token;
          this.expiresAt = Date.now() + result.expiresInSeconds * 1000;
        }).finally(() => { this.pending = null; });
      }
      await this.pending;
      return this.token;
    }
    /** Milliseconds until the token should be replaced. */
    get remainingMillis() { return this.expiresAt - 10000 - Date.now(); }
  }

  function pollingInterval(value, minimum) {
    if (value === undefined || value === null) return DEFAULT_POLLING_INTERVAL_MILLIS;
    if (value === 0 || value === Infinity) return Infinity; // automatic updates off
    return Math.max(minimum, Number(value));
  }

  function trimmedServer(url) {
    return (url || (global.location ? global.location.origin : '')).replace(/\/+$/, '');
  }

  /** What every provider takes: the provider (Fleet Engine's project) and fleetd's address. */
  class LocationProvider extends Emitter {
    constructor(options) {
      super();
      this.providerId = options.providerId || options.projectId;
      if (!this.providerId) throw new TypeError('providerId is required');
      this.serverUrl = trimmedServer(options.serverUrl);
    }
  }

  /**
   * One resource followed live (a trip, a shipment): fleetd's server-sent events while they flow,
   * polling the Fleet Engine read every `pollingIntervalMillis` while they do not. A subclass says
   * where the resource lives (`_path`), which event carries it, and when it is over (`_finished`).
   * Starts when a map view takes it, or on start().
   */
  class StreamedLocationProvider extends LocationProvider {
    constructor(options, id, context) {
      super(options);
      this._id = id || '';
      this.pollingIntervalMillis = pollingInterval(options.pollingIntervalMillis, MINIMUM_POLLING_INTERVAL_MILLIS);
      this.useServerSentEvents = options.useServerSentEvents !== false && typeof EventSource !== 'undefined';
      this.staleLocationThresholdMillis = options.staleLocationThresholdMillis || 60000;
      this._tokens = new TokenCache(options.authTokenFetcher, context);
      this._value = null;
      this.isStreaming = false;
      this._started = false;
      this._generation = 0;
      this._stream = null;
      this._timers = [];
      this._retryMillis = 1000;
    }

    _setId(id) {
      if (id === this._id) return;
      this._id = id || '';
      this._value = null;
      this._tokens.invalidate();
      if (this._started) { this._close(); this._open(); }
    }

    start() {
      if (this._started) return;
      this._started = true;
      this._open();
    }

    stop() {
      this._started = false;
      this._close();
    }

    /** Reads the resource now. */
    refresh() { return this._poll(); }

    _open() {
      if (!this._id) return;
      const generation = ++this._generation;
      this._poll(); // at once: the first picture, and any error, without waiting for the stream
      if (this.pollingIntervalMillis === Infinity) return;
      if (this.useServerSentEvents) this._openStream(generation);
      const tick = () => {
        if (generation !== this._generation) return;
        if (!this.isStreaming) this._poll();
        this._timers.push(setTimeout(tick, this.pollingIntervalMillis));
      };
      this._timers.push(setTimeout(tick, this.pollingIntervalMillis));
    }

    _close() {
      this._generation++;
      for (const t of this._timers) clearTimeout(t);
      this._timers = [];
      if (this._stream) { this._stream.close(); this._stream = null; }
      this.isStreaming = false;
    }

    async _openStream(generation) {
      let token;
      try { token = await this._tokens.get(); } catch (e) { this._fail(e); return; }
      if (generation !== this._generation || this._finished()) return;
      const url = this._path(':watch', '/fleetkit/v1') + this._watchQuery + 'access_token=' + encodeURIComponent(token);
      const stream = new EventSource(url);
      this._stream = stream;
      const reopen = (delay) => {
        stream.close();
        if (this._stream === stream) this._stream = null;
        this.isStreaming = false;
        this._timers.push(setTimeout(() => {
          if (generation === this._generation && !this._finished()) this._openStream(generation);
        }, delay));
      };
      stream.addEventListener(this._eventName, (event) => {
        if (generation !== this._generation) return;
        this.isStreaming = true;
        this._retryMillis = 1000;
        this._receive(JSON.parse(event.data));
        if (this._finished()) { stream.close(); this.isStreaming = false; }
      });
      stream.addEventListener('error', (event) => {
        if (generation !== this._generation) return;
        if (event.data) {
          // The server's own error event: the stream is over.
          let error;
          try {
            const body = JSON.parse(event.data).error;
            error = new FleetEngineError(body.status, body.message, body.code);
          } catch (e) { error = new FleetEngineError('UNKNOWN', String(event.data)); }
          if (error.status === 'UNAUTHENTICATED') this._tokens.invalidate(); else this._fail(error);
          reopen(this._backoff());
        } else if (stream.readyState === EventSource.CLOSED) {
          // Refused or unreachable: polling takes over until the stream is back.
          reopen(this._backoff());
        } else {
          this.isStreaming = false; // the browser reconnects by itself; poll meanwhile
        }
      });
      // A fresh token before this one expires (the stream was authorised with it).
      const renewIn = Math.max(5000, this._tokens.remainingMillis);
      this._timers.push(setTimeout(() => {
        if (generation === this._generation && this._stream === stream) reopen(0);
      }, Math.min(renewIn, 2147483647)));
    }

    _backoff() {
      const delay = this._retryMillis;
      this._retryMillis = Math.min(30000, this._retryMillis * 2);
      return delay;
    }

    async _poll(retried) {
      if (!this._id) return;
      const generation = this._generation;
      let response;
      try {
        const token = await this._tokens.get();
        response = await fetch(this._path(this._pollQuery), {
          headers: { Authorization: 'Bearer ' + token }, cache: 'no-store',
        });
      } catch (e) {
        if (generation === this._generation) {
          this._fail(e instanceof FleetEngineError || e instanceof TypeError && /authTokenFetcher/.test(e.message)
            ? e : new FleetEngineError('UNAVAILABLE', 'fleetd cannot be reached: ' + e.message));
        }
        return;
      }
      if (generation !== this._generation) return;
      if (response.ok) {
        this._receive(await response.json());
        return;
      }
      const error = await FleetEngineError.fromResponse(response);
      if (error.status === 'UNAUTHENTICATED' && !retried) {
        this._tokens.invalidate();
        return this._poll(true);
      }
      this._fail(error);
    }

    _receive(value) {
      const previous = this._value;
      // The first poll and the stream run side by side: a poll answered after a newer push must
      // not take the same vehicle back to where it was.
      if (previous && this._sameVehicle(previous, value)) {
        const shown = locationTime(this._vehicleLocation(previous));
        const received = locationTime(this._vehicleLocation(value));
        if (shown !== null && received !== null && received < shown) return;
      }
      this._value = value;
      this.error = null;
      if (previous && JSON.stringify(previous) === JSON.stringify(value)) return;
      this._emit('update', this._updateEvent(value));
      if (this._finished()) this._close();
    }

    _fail(error) {
      this.error = error;
      this._emit('error', { error });
    }
  }

  /**
   * One trip, live: `update` events carry `{trip}` (Fleet Engine's Trip in proto3 JSON),
   * `error` events `{error}` (a FleetEngineError); GetTrip in the JOURNEY_SHARING view, or
   * fleetd's `trips/{trip}:watch`.
   */
  class FleetEngineTripLocationProvider extends StreamedLocationProvider {
    constructor(options) {
      options = options || {};
      super(options, options.tripId, () => ({ tripId: this._id }));
      this._eventName = 'trip';
      this._pollQuery = '?view=JOURNEY_SHARING_V1S';
      this._watchQuery = '?view=JOURNEY_SHARING_V1S&route_format_type=ENCODED_POLYLINE_TYPE&';
    }

    get tripId() { return this._id; }
    set tripId(id) { this._setId(id); }
    get trip() { return this._value; }

    /** The trip's address under Fleet Engine's `/v1` (GetTrip) or FleetKit's `/fleetkit/v1` (its stream). */
    _path(suffix, api = '/v1') {
      return `${this.serverUrl}${api}/providers/${encodeURIComponent(this.providerId)}/trips/` +
        `${encodeURIComponent(this._id)}${suffix}`;
    }

    _finished() { return this.trip && TERMINAL.includes(this.trip.tripStatus); }
    _sameVehicle(a, b) { return a.vehicleId === b.vehicleId; }
    _vehicleLocation(trip) { return trip.lastLocation; }
    _updateEvent(trip) { return { trip }; }
  }

  /**
   * One shipment, live, as Google's shipment-tracking library follows it: `update` events carry
   * `{taskTrackingInfo}` (Fleet Engine's TaskTrackingInfo in proto3 JSON), `error` events
   * `{error}`; GetTaskTrackingInfo, or fleetd's `taskTrackingInfo/{id}:watch`. The token is a
   * `deliveryconsumer` token for the tracking ID. Over once the task is CLOSED.
   */
  class FleetEngineShipmentLocationProvider extends StreamedLocationProvider {
    constructor(options) {
      options = options || {};
      super(options, options.trackingId, () => ({ trackingId: this._id }));
      this._eventName = 'taskTrackingInfo';
      this._pollQuery = '';
      this._watchQuery = '?';
    }

    get trackingId() { return this._id; }
    set trackingId(id) { this._setId(id); }
    get taskTrackingInfo() { return this._value; }

    _path(suffix, api = '/v1') {
      return `${this.serverUrl}${api}/providers/${encodeURIComponent(this.providerId)}/taskTrackingInfo/` +
        `${encodeURIComponent(this._id)}${suffix}`;
    }

    _finished() { return this._value && this._value.state === 'CLOSED'; }
    _sameVehicle() { return true; }
    _vehicleLocation(info) { return info.vehicleLocation; }
    _updateEvent(taskTrackingInfo) { return { taskTrackingInfo }; }
  }

  /**
   * A provider's vehicles, polled with a Fleet Engine List call page by page: `update` events
   * carry those with a location no older than `staleLocationThresholdMillis` and `{all}`. A
   * subclass says where the list lives (`_path`), what else the query takes (`_addQuery`) and the
   * answer's list field (`_listField`).
   */
  class PolledFleetLocationProvider extends LocationProvider {
    constructor(options, filter) {
      options = options || {};
      super(options);
      this._filter = filter || '';
      this.pollingIntervalMillis = pollingInterval(options.pollingIntervalMillis, 1000);
      this.staleLocationThresholdMillis = options.staleLocationThresholdMillis || 300000;
      this._tokens = new TokenCache(options.authTokenFetcher, () => ({}));
      this._timer = null;
      this.vehicles = [];
    }

    start() {
      if (this._running) return;
      this._running = true;
      const tick = async () => {
        if (!this._running) return;
        await this.refresh();
        if (this._running && this.pollingIntervalMillis !== Infinity) {
          this._timer = setTimeout(tick, this.pollingIntervalMillis);
        }
      };
      tick();
    }

    stop() { this._running = false; clearTimeout(this._timer); }

    _addQuery(query) {}

    _setFilter(filter) {
      this._filter = filter || '';
      return this.refresh();
    }

    /** A Fleet Engine read under the provider (`path` after `/v1/providers/{p}/`), as JSON. */
    async _get(path) {
      const token = await this._tokens.get();
      const response = await fetch(`${this.serverUrl}/v1/providers/${encodeURIComponent(this.providerId)}/${path}`,
        { headers: { Authorization: 'Bearer ' + token }, cache: 'no-store' });
      if (!response.ok) {
        const error = await FleetEngineError.fromResponse(response);
        if (error.status === 'UNAUTHENTICATED') this._tokens.invalidate();
        throw error;
      }
      return response.json();
    }

    async refresh() {
      const filter = this._filter;
      let all = [];
      let pageToken = '';
      try {
        do {
          const query = new URLSearchParams({ pageSize: String(this._pageSize) });
          this._addQuery(query);
          if (filter) query.set('filter', filter);
          if (pageToken) query.set('pageToken', pageToken);
          const page = await this._get(`${this._path}?${query}`);
          all = all.concat(page[this._listField] || []);
          pageToken = page.nextPageToken || '';
        } while (pageToken);
      } catch (e) {
        const error = e instanceof FleetEngineError ? e : new FleetEngineError('UNAVAILABLE', 'fleetd cannot be reached: ' + e.message);
        this._emit('error', { error, filter });
        return;
      }
      if (filter !== this._filter) return; // a newer filter is on its way
      const now = Date.now();
      this.all = all;
      this.vehicles = all.filter((v) => {
        const time = locationTime(v.lastLocation);
        return time !== null && now - time <= this.staleLocationThresholdMillis;
      });
      this._emitUpdate(this.vehicles, all, filter);
    }
  }

  /**
   * Every vehicle of a provider, polled with ListVehicles: `update` events carry `{vehicles}`
   * (those with a location no older than `staleLocationThresholdMillis`) and `{all}`.
   */
  class FleetEngineFleetLocationProvider extends PolledFleetLocationProvider {
    constructor(options) {
      super(options, (options || {}).vehicleFilter);
      this._path = 'vehicles';
      this._listField = 'vehicles';
      this._pageSize = 500;
    }

    get vehicleFilter() { return this._filter; }

    setVehicleFilter(filter) { return this._setFilter(filter); }

    _addQuery(query) {
      // Fleet Engine requires the categories; every one of them.
      for (const category of VEHICLE_CATEGORIES) query.append('vehicleTypeCategories', category);
    }

    _emitUpdate(vehicles, all, filter) { this._emit('update', { vehicles, all, filter }); }
  }

  /**
   * Every delivery vehicle of a provider, polled with ListDeliveryVehicles (as Google's
   * `FleetEngineDeliveryFleetLocationProvider`): `update` events carry `{deliveryVehicles}` (those
   * with a fresh location) and `{all}`. The list carries no stops (Fleet Engine leaves them out);
   * `deliveryVehicle(id)` reads one vehicle with its remaining stops.
   */
  class FleetEngineDeliveryFleetLocationProvider extends PolledFleetLocationProvider {
    constructor(options) {
      super(options, (options || {}).deliveryVehicleFilter);
      this._path = 'deliveryVehicles';
      this._listField = 'deliveryVehicles';
      this._pageSize = 100;
    }

    get deliveryVehicleFilter() { return this._filter; }

    setDeliveryVehicleFilter(filter) { return this._setFilter(filter); }

    _emitUpdate(deliveryVehicles, all, filter) { this._emit('update', { deliveryVehicles, all, filter }); }

    /** One delivery vehicle with its remaining stops (GetDeliveryVehicle). */
    deliveryVehicle(id) { return this._get(`deliveryVehicles/${encodeURIComponent(id)}`); }
  }

  function locationTime(location) {
    if (!location) return null;
    const text = location.serverTime || location.updateTime;
    const time = text ? Date.parse(text) : NaN;
    return isNaN(time) ? null : time;
  }

  /** Google's encoded polyline format (precision 5) to [[lat, lng], …]. */
  function decodePolyline(encoded) {
    const points = [];
    let index = 0, lat = 0, lng = 0;
    while (index < (encoded || '').length) {
      for (const axis of [0, 1]) {
        let shift = 0, result = 0, byte;
        do {
          byte = encoded.charCodeAt(index++) - 63;
          result |= (byte & 0x1f) << shift;
          shift += 5;
        } while (byte >= 0x20 && index < encoded.length);
        const delta = result & 1 ? ~(result >> 1) : result >> 1;
        if (axis === 0) lat += delta; else lng += delta;
      }
      points.push([lat / 1e5, lng / 1e5]);
    }
    return points;
  }

  /** A waypoint's path as [[lat, lng], …]. */
  function waypointPath(waypoint) {
    if (!waypoint) return [];
    if (waypoint.pathToWaypoint && waypoint.pathToWaypoint.length) {
      return waypoint.pathToWaypoint.map((p) => [p.latitude || 0, p.longitude || 0]);
    }
    return decodePolyline(waypoint.encodedPathToWaypoint || '');
  }

  function point(location) {
    const p = location && (location.point || location.location || location);
    return p && (p.latitude !== undefined || p.longitude !== undefined) ? [p.latitude || 0, p.longitude || 0] : null;
  }

  /** Metres between two [lat, lng]. */
  function distance(a, b) {
    const rad = Math.PI / 180;
    const x = (b[1] - a[1]) * rad * Math.cos((a[0] + b[0]) / 2 * rad);
    const y = (b[0] - a[0]) * rad;
    return Math.sqrt(x * x + y * y) * 6371000;
  }

  /** A path with its cumulative lengths: projection of points, and points at a distance along it. */
  class Route {
    constructor(points) {
      this.points = points;
      this.along = [0];
      for (let i = 1; i < points.length; i++) this.along.push(this.along[i - 1] + distance(points[i - 1], points[i]));
      this.length = this.along[this.along.length - 1] || 0;
    }
    /** {along, offset}: how far along the route the nearest point to `p` is, and how far away. */
    project(p) {
      let best = { along: 0, offset: this.points.length ? distance(p, this.points[0]) : Infinity };
      const cos = Math.cos(p[0] * Math.PI / 180);
      for (let i = 1; i < this.points.length; i++) {
        const a = this.points[i - 1], b = this.points[i];
        const dx = (b[1] - a[1]) * cos, dy = b[0] - a[0];
        const len2 = dx * dx + dy * dy;
        let t = len2 ? (((p[1] - a[1]) * cos) * dx + (p[0] - a[0]) * dy) / len2 : 0;
        t = Math.max(0, Math.min(1, t));
        const q = [a[0] + dy * t, a[1] + (b[1] - a[1]) * t];
        const offset = distance(p, q);
        if (offset < best.offset) best = { along: this.along[i - 1] + (this.along[i] - this.along[i - 1]) * t, offset };
      }
      return best;
    }
    at(along) {
      const pts = this.points;
      if (along <= 0 || pts.length < 2) return pts[0];
      for (let i = 1; i < pts.length; i++) {
        if (this.along[i] >= along) {
          const span = this.along[i] - this.along[i - 1];
          const t = span ? (along - this.along[i - 1]) / span : 0;
          return [pts[i - 1][0] + (pts[i][0] - pts[i - 1][0]) * t, pts[i - 1][1] + (pts[i][1] - pts[i - 1][1]) * t];
        }
      }
      return pts[pts.length - 1];
    }
  }

  const defaultIcons = {
    vehicle: () => L.divIcon({
      className: 'fk-vehicle', iconSize: [30, 30], iconAnchor: [15, 15],
      html: '<div class="fk-vehicle-body"><svg viewBox="0 0 30 30" width="30" height="30">' +
        '<circle cx="15" cy="15" r="11" fill="#1a73e8" stroke="#fff" stroke-width="3"/>' +
        '<path d="M15 7 L20 18 L15 15.5 L10 18 Z" fill="#fff"/></svg></div>',
    }),
    stop: (colour, letter) => L.divIcon({
      className: 'fk-stop', iconSize: [26, 34], iconAnchor: [13, 33],
      html: `<svg viewBox="0 0 26 34" width="26" height="34"><path d="M13 33 C13 33 1 19 1 12 A12 12 0 0 1 25 12 C25 19 13 33 13 33 Z" ` +
        `fill="${colour}" stroke="#fff" stroke-width="2"/><text x="13" y="16" font-size="11" font-family="sans-serif" ` +
        `text-anchor="middle" fill="#fff">${letter}</text></svg>`,
    }),
  };

  /** Applies a marker customisation: marker options, or a function of {marker, trip, isNew}. */
  function customise(marker, customisation, params) {
    if (!customisation) return;
    if (typeof customisation === 'function') { customisation(Object.assign({ marker }, params)); return; }
    if (customisation.icon) marker.setIcon(customisation.icon);
    if (customisation.opacity !== undefined) marker.setOpacity(customisation.opacity);
    if (customisation.zIndexOffset !== undefined) marker.setZIndexOffset(customisation.zIndexOffset);
    if (customisation.title && marker.getElement()) marker.getElement().title = customisation.title;
  }

  /**
   * A Leaflet map following trip location providers: vehicle, pickup, drop-off and
   * intermediate-stop markers; the taken, active (coloured by traffic) and remaining polylines;
   * the viewport fitted to the anticipated route unless `automaticViewportMode` is 'NONE'.
   * The vehicle marker glides along the route and never moves backwards along it; it is
   * hidden when the location is older than the provider's `staleLocationThresholdMillis`.
   */
  class JourneySharingMapView {
    constructor(options) {
      options = options || {};
      this.element = options.element;
      if (!this.element) throw new TypeError('element is required');
      this.locationProviders = options.locationProviders || (options.locationProvider ? [options.locationProvider] : []);
      this.automaticViewportMode = options.automaticViewportMode || 'FIT_ANTICIPATED_ROUTE';
      this.serverUrl = trimmedServer(options.serverUrl);
      this.customisations = {
        vehicle: options.vehicleMarkerCustomization,
        pickup: options.pickupMarkerCustomization,
        dropoff: options.dropoffMarkerCustomization,
        intermediate: options.intermediateDestinationMarkerCustomization,
      };
      this.polylineOptions = {
        taken: Object.assign({ color: '#9aa0a6', weight: 5, opacity: 0.9 }, options.takenPolylineCustomization),
        active: Object.assign({ weight: 6, opacity: 0.95 }, options.activePolylineCustomization),
        remaining: Object.assign({ color: '#8ab4f8', weight: 5, opacity: 0.9, dashArray: '1 8' }, options.remainingPolylineCustomization),
      };
      if (typeof L === 'undefined') {
        this.map = null;
        this.element.innerHTML = missingLeafletMessage;
        return;
      }
      this.map = L.map(this.element, { zoomControl: true });
      addBasemap(this.map, this.serverUrl, options.tileUrl, () => !this._fitted);
      this.layers = {
        taken: L.polyline([], this.polylineOptions.taken).addTo(this.map),
        remaining: L.layerGroup().addTo(this.map),
        active: L.layerGroup().addTo(this.map),
        stops: L.layerGroup().addTo(this.map),
      };
      this.vehicleMarker = null;
      this.stopMarkers = { pickup: null, dropoff: null, intermediate: [] };
      this._route = null;      // the route the vehicle marker moves along
      this._along = 0;         // where along it the marker is
      this._shown = null;      // the marker's position [lat, lng]
      this._animation = null;
      for (const provider of this.locationProviders) {
        provider.addListener('update', (event) => this._render(provider, event.trip));
        if (provider.trip) this._render(provider, provider.trip);
        provider.start();
      }
      this._staleTimer = setInterval(() => { for (const p of this.locationProviders) if (p.trip) this._updateVehicleVisibility(p, p.trip); }, 1000);
    }

    /** Where the vehicle marker is drawn, [lat, lng] (null when hidden). */
    get vehiclePosition() {
      return this.vehicleMarker && this.map.hasLayer(this.vehicleMarker) ? this._shown : null;
    }

    _render(provider, trip) {
      const status = trip.tripStatus || 'UNKNOWN_TRIP_STATUS';
      const terminal = TERMINAL.includes(status);
      const remaining = terminal ? [] : (trip.remainingWaypoints || []);
      const activePath = waypointPath(remaining[0]);
      // Polylines: the remaining ones first, so that the active one is drawn over them where
      // the route comes back along the same road (a car finishing another ride first).
      this.layers.active.clearLayers();
      this.layers.remaining.clearLayers();
      for (const waypoint of remaining.slice(1)) {
        const path = waypointPath(waypoint);
        if (path.length > 1) L.polyline(path, this.polylineOptions.remaining).addTo(this.layers.remaining);
      }
      if (activePath.length > 1) this._drawTraffic(activePath, remaining[0].trafficToWaypoint);
      // Stop markers.
      const beforePickup = ['NEW', 'ENROUTE_TO_PICKUP', 'ARRIVED_AT_PICKUP', 'UNKNOWN_TRIP_STATUS'].includes(status);
      this._stopMarker('pickup', beforePickup && !terminal ? point(trip.pickupPoint) : null, '#188038', 'P', trip);
      this._stopMarker('dropoff', !terminal ? point(trip.dropoffPoint) : null, '#d93025', 'D', trip);
      const intermediates = terminal ? [] : (trip.intermediateDestinations || [])
        .slice(beforePickup ? 0 : (trip.intermediateDestinationIndex || 0) +
          (status === 'ARRIVED_AT_INTERMEDIATE_DESTINATION' || status === 'ENROUTE_TO_DROPOFF' ? 1 : 0))
        .map(point).filter(Boolean);
      this._intermediateMarkers(intermediates, trip);
      // Vehicle.
      const location = trip.lastLocation && point(trip.lastLocation.location);
      if (location && !terminal) this._moveVehicle(location, activePath, trip);
      this._updateVehicleVisibility(provider, trip);
      this._fitViewport(activePath, remaining);
    }

    _drawTraffic(path, traffic) {
      const intervals = (traffic && traffic.speedReadingInterval) || [];
      const speedAt = new Array(path.length - 1).fill('NORMAL');
      for (const interval of intervals) {
        for (let i = interval.startPolylinePointIndex || 0; i < (interval.endPolylinePointIndex || 0) && i < speedAt.length; i++) {
          speedAt[i] = interval.speed || 'NORMAL';
        }
      }
      let start = 0;
      for (let i = 1; i <= speedAt.length; i++) {
        if (i === speedAt.length || speedAt[i] !== speedAt[start]) {
          const colour = this.polylineOptions.active.color || TRAFFIC_COLOURS[speedAt[start]] || TRAFFIC_COLOURS.NORMAL;
          L.polyline(path.slice(start, i + 1), Object.assign({}, this.polylineOptions.active, { color: colour }))
            .addTo(this.layers.active);
          start = i;
        }
      }
    }

    _stopMarker(kind, position, colour, letter, trip) {
      let marker = this.stopMarkers[kind];
      if (!position) {
        if (marker) { this.layers.stops.removeLayer(marker); this.stopMarkers[kind] = null; }
        return;
      }
      const isNew = !marker;
      if (isNew) {
        marker = L.marker(position, { icon: defaultIcons.stop(colour, letter), keyboard: false, title: kind });
        marker.addTo(this.layers.stops);
        this.stopMarkers[kind] = marker;
      } else {
        marker.setLatLng(position);
      }
      customise(marker, this.customisations[kind], { trip, isNew });
    }

    _intermediateMarkers(positions, trip) {
      const markers = this.stopMarkers.intermediate;
      while (markers.length > positions.length) this.layers.stops.removeLayer(markers.pop());
      positions.forEach((position, i) => {
        const isNew = !markers[i];
        if (isNew) {
          markers[i] = L.marker(position, { icon: defaultIcons.stop('#f29900', String(i + 1)), title: 'stop' })
            .addTo(this.layers.stops);
        } else {
          markers[i].setLatLng(position);
        }
        customise(markers[i], this.customisations.intermediate, { trip, isNew });
      });
    }

    _moveVehicle(target, activePath, trip) {
      const isNew = !this.vehicleMarker;
      this._vehicleHeading = trip.lastLocation && trip.lastLocation.heading;
      if (isNew) {
        this.vehicleMarker = L.marker(target, { icon: defaultIcons.vehicle(), zIndexOffset: 1000, keyboard: false, title: 'vehicle' });
        this._shown = target;
        this.layers.taken.setLatLngs([target]);
      } else {
        this._finishAnimation();
        const projected = this._route ? this._route.project(target) : null;
        if (projected && projected.offset <= 30) {
          // Forward along the route the marker is on; a report behind it is not drawn (the
          // marker waits there).
          if (projected.along > this._along) this._animate(this._route, this._along, projected.along);
        } else {
          // Off that route (the driver took another way, or a new leg began): joined directly.
          const direct = new Route([this._shown, target]);
          this._animate(direct, 0, direct.length);
        }
      }
      // Later reports are measured along the new route, from where the marker ends up on it.
      this._next = activePath.length > 1 ? new Route(activePath) : null;
      if (!this._animation) this._adoptNextRoute();
      customise(this.vehicleMarker, this.customisations.vehicle, { trip, isNew });
    }

    _adoptNextRoute() {
      if (this._next === undefined) return;
      this._route = this._next;
      this._along = this._route ? this._route.project(this._shown).along : 0;
      this._next = undefined;
    }

    _finishAnimation() {
      const animation = this._animation;
      if (!animation) return;
      cancelAnimationFrame(animation.frame);
      this._animation = null;
      this._place(animation.route.at(animation.to));
      this._adoptNextRoute();
    }

    _animate(route, from, to) {
      if (to - from < 0.5) return;
      const started = performance.now();
      const duration = 1000;
      const animation = { route, to, frame: 0 };
      this._animation = animation;
      const step = (now) => {
        if (this._animation !== animation) return;
        const t = Math.min(1, (now - started) / duration);
        this._place(route.at(from + (to - from) * t));
        if (route === this._route) this._along = from + (to - from) * t;
        if (t < 1) {
          animation.frame = requestAnimationFrame(step);
        } else {
          this._animation = null;
          this._adoptNextRoute();
        }
      };
      animation.frame = requestAnimationFrame(step);
    }

    _place(position) {
      this._shown = position;
      this.vehicleMarker.setLatLng(position);
      this.layers.taken.addLatLng(position);
      this._rotate();
    }

    _rotate() {
      const element = this.vehicleMarker && this.vehicleMarker.getElement();
      const body = element && element.querySelector('.fk-vehicle-body');
      if (body && typeof this._vehicleHeading === 'number') body.style.transform = `rotate(${this._vehicleHeading}deg)`;
    }

    _updateVehicleVisibility(provider, trip) {
      if (!this.vehicleMarker) return;
      const time = locationTime(trip.lastLocation);
      const stale = time === null || Date.now() - time > provider.staleLocationThresholdMillis;
      const visible = !stale && !TERMINAL.includes(trip.tripStatus);
      if (visible && !this.map.hasLayer(this.vehicleMarker)) {
        this.vehicleMarker.addTo(this.map);
        this._rotate();
      }
      if (!visible && this.map.hasLayer(this.vehicleMarker)) this.map.removeLayer(this.vehicleMarker);
    }

    _fitViewport(activePath, remaining) {
      if (this.automaticViewportMode === 'NONE') return;
      const points = activePath.slice();
      for (const waypoint of remaining) {
        const p = point(waypoint.location);
        if (p) points.push(p);
      }
      if (this._shown && this.vehicleMarker && this.map.hasLayer(this.vehicleMarker)) points.push(this._shown);
      for (const marker of [this.stopMarkers.pickup, this.stopMarkers.dropoff, ...this.stopMarkers.intermediate]) {
        if (marker) { const ll = marker.getLatLng(); points.push([ll.lat, ll.lng]); }
      }
      if (!points.length) return;
      const bounds = L.latLngBounds(points);
      const view = this.map.getBounds();
      if (this._fitted && view.contains(bounds)) return;
      this._fitted = true;
      this.map.fitBounds(bounds.pad(0.15), { maxZoom: 17 });
    }
  }

  /** google.type.Money as text, exactly ("12.40 EUR"): whole units and the nanos cut to the
   * currency's digits, never through a floating-point number. */
  function formatMoney(money) {
    if (!money) return '–';
    const code = money.currencyCode || '';
    let digits = 2;
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits;
    } catch (e) { /* an unknown code: 2 */ }
    const negative = String(money.units || '0').startsWith('-') || (money.nanos || 0) < 0;
    const units = String(money.units || '0').replace('-', '');
    const nanos = String(Math.abs(money.nanos || 0)).padStart(9, '0').slice(0, digits);
    return `${negative ? '-' : ''}${units}${digits ? '.' + nanos : ''} ${code}`;
  }

  const missingLeafletMessage =
    '<div class="fk-missing">The map library is not installed on this server. ' +
    'On Debian or Ubuntu: <code>sudo apt-get install libjs-leaflet libjs-leaflet.markercluster</code>, ' +
    'then reload this page.</div>';

  /**
   * fleetd's tiles on a Leaflet map, its first view on the road graph's extent (unless
   * `fitToExtent()` says otherwise), and a note when fleetd has no road graph.
   */
  function addBasemap(map, serverUrl, tileUrl, fitToExtent) {
    L.tileLayer(tileUrl || `${serverUrl}/tiles/{z}/{x}/{y}.svg`, {
      maxZoom: 20, attribution: '© <a href="https://www.openstreetmap.org/copyright">OpenStreetMap</a> contributors',
    }).addTo(map);
    map.setView([0, 0], 2);
    fetchMapInfo(serverUrl).then((info) => {
      if (info && info.bounds) {
        if (fitToExtent()) map.fitBounds([[info.bounds.south, info.bounds.west], [info.bounds.north, info.bounds.east]]);
      } else if (info) {
        const note = L.control({ position: 'bottomleft' });
        note.onAdd = () => {
          const div = L.DomUtil.create('div', 'fk-no-basemap');
          div.textContent = 'No basemap: fleetd runs without a road graph (start it with --osm FILE.osm.pbf).';
          return div;
        };
        note.addTo(map);
      }
    });
  }

  let mapInfo = null;
  function fetchMapInfo(serverUrl) {
    if (!mapInfo) mapInfo = fetch(`${serverUrl}/web/map.json`).then((r) => (r.ok ? r.json() : null)).catch(() => null);
    return mapInfo;
  }

  /** The claims of a JWT (not verified: fleetd verifies it). */
  function tokenClaims(token) {
    try {
      const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      return JSON.parse(atob(part + '='.repeat((4 - part.length % 4) % 4)));
    } catch (e) {
      return null;
    }
  }

  /** The provider a FleetKit or Google service account belongs to, from a token's issuer. */
  function providerOfToken(claims) {
    const match = claims && /@([^.]+)\.(fleetkit\.local|iam\.gserviceaccount\.com)$/.exec(claims.iss || '');
    return match ? match[1] : null;
  }

  /**
   * A page's credentials from its address's fragment (`#token=…[&provider=…]`): the token, its
   * claims, the provider (from `provider=` or the token's issuer), and an authTokenFetcher
   * handing out that one token for as long as it lives.
   */
  function fragmentCredentials(hash) {
    const params = new URLSearchParams((hash || '').replace(/^#/, ''));
    const token = params.get('token') || '';
    const claims = tokenClaims(token);
    return {
      params,
      token,
      claims,
      providerId: params.get('provider') || providerOfToken(claims),
      expired: () => !!claims && typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now(),
      authTokenFetcher: async () => ({
        token, expiresInSeconds: Math.max(0, ((claims && claims.exp) || 0) - Date.now() / 1000),
      }),
    };
  }

  global.fleetkit = global.fleetkit || {};
  global.fleetkit.journeySharing = {
    FleetEngineTripLocationProvider,
    FleetEngineShipmentLocationProvider,
    FleetEngineFleetLocationProvider,
    FleetEngineDeliveryFleetLocationProvider,
    JourneySharingMapView,
    FleetEngineError,
    Route,
    decodePolyline,
    waypointPath,
    point,
    distance,
    tokenClaims,
    providerOfToken,
    fragmentCredentials,
    addBasemap,
    fetchMapInfo,
    icons: defaultIcons,
    missingLeafletMessage,
    formatMoney,
    DEFAULT_POLLING_INTERVAL_MILLIS,
    MINIMUM_POLLING_INTERVAL_MILLIS,
  };
})(typeof window !== 'undefined' ? window : this);
